"""``python -m spate.cli.kafka_tools TOOL [ARGS...]``: run one of Kafka's tools by its name (``bin/`` uses this)."""

from __future__ import annotations

import importlib
import os
import sys

from spate.cli.kafka_tools import TOOLS
from spate.cli.kafka_tools.tool import FAILURE_EXIT, run_tool


def main(argv: list[str]) -> int:
    name = os.path.basename(argv[0]) if argv else ""
    if name not in TOOLS:
        known = ", ".join(TOOLS)
        print(f"Error: unknown tool {name or '(none)'!r}; the tools are: {known}", file=sys.stderr)
        return FAILURE_EXIT
    module = importlib.import_module(f"spate.cli.kafka_tools.{TOOLS[name]}")
    return run_tool(module.main, argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
