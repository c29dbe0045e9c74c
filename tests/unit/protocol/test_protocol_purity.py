"""The codec and record layers stay pure, and the broker never depends on Spark."""

from __future__ import annotations

import ast
from pathlib import Path

import broker_core

BROKER_CORE = Path(broker_core.__file__).parent
PURE_PACKAGES = [BROKER_CORE / "protocol", BROKER_CORE / "records"]
# Sockets, event loops, threads, files, processes and clocks belong to the server, not the codec.
IO_MODULES = {
    "asyncio", "socket", "socketserver", "selectors", "ssl", "os", "io", "pathlib", "shutil",
    "tempfile", "mmap", "subprocess", "threading", "multiprocessing", "signal", "fcntl", "time",
    "datetime", "random", "logging",
}  # fmt: skip


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def python_files(*roots: Path) -> list[Path]:
    return sorted(path for root in roots for path in root.rglob("*.py"))


def test_protocol_and_records_modules_import_no_io_modules() -> None:
    files = python_files(*PURE_PACKAGES)
    assert any(path.name == "schema.py" for path in files), "the scan must see the codec"
    offenders = {}
    for path in files:
        names = sorted(name for name in imported_modules(path) if name.split(".")[0] in IO_MODULES)
        if names:
            offenders[str(path.relative_to(BROKER_CORE))] = names
    assert offenders == {}


def test_broker_core_never_imports_pyspark() -> None:
    files = python_files(BROKER_CORE)
    offenders = [
        str(path.relative_to(BROKER_CORE))
        for path in files
        if any(name.split(".")[0] == "pyspark" for name in imported_modules(path))
    ]
    assert files and offenders == []
