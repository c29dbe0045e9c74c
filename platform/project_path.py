"""Make this checkout visible to every interpreter of a virtual environment, Spark's workers included.

Run with the environment's interpreter (``platform/setup.sh`` does):

    .venv/bin/python platform/project_path.py

It writes ``spate-project.pth`` into the environment's site-packages. Its first line puts the project
directory on ``sys.path``: pyspark finds data sources by scanning ``sys.path`` for top-level
``pyspark_<name>`` modules, which an editable install's import hook hides from that scan. Its second
line makes the environment's interpreter the default ``PYSPARK_PYTHON``: Spark looks data sources up and
runs Python workers with ``PYSPARK_PYTHON``, else whatever ``python3`` comes first on ``PATH``.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

PTH_NAME = "spate-project.pth"
PYSPARK_PYTHON_LINE = "import os, sys; os.environ.setdefault('PYSPARK_PYTHON', sys.executable)\n"


def pth_text(project_dir: Path) -> str:
    return f"{project_dir.resolve()}\n{PYSPARK_PYTHON_LINE}"


def install(project_dir: Path, site_packages: Path) -> Path:
    path = site_packages / PTH_NAME
    path.write_text(pth_text(project_dir))
    return path


def main() -> int:
    if sys.prefix == sys.base_prefix:
        print("spate: run this with a virtual environment's interpreter, e.g. .venv/bin/python", file=sys.stderr)
        return 1
    path = install(Path(__file__).resolve().parent.parent, Path(sysconfig.get_paths()["purelib"]))
    print(f"spate: {path} puts {path.read_text().splitlines()[0]} on sys.path", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
