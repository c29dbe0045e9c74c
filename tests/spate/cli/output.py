"""Reading what the ``spate`` command prints: table rows and JSON lines."""

from __future__ import annotations

import json
import re


def cells(line: str) -> list[str]:
    """The non-empty cells of one line of a table (box-drawn on a terminal, ``|`` on a pipe)."""
    return [cell.strip() for cell in re.split(r"[│|]", line) if cell.strip()]


def table_row(output: str, first_cell: str) -> list[str]:
    """The cells of the table row whose first cell is ``first_cell``."""
    for line in output.splitlines():
        row = cells(line)
        if row and row[0] == first_cell:
            return row
    raise AssertionError(f"no row {first_cell!r} in:\n{output}")


def partition_rows(output: str) -> dict[tuple[str, int], list[str]]:
    """Rows that start with a topic and a partition number, keyed by (topic, partition)."""
    found = {}
    for line in output.splitlines():
        row = cells(line)
        if len(row) >= 2 and row[1].isdigit():
            found[(row[0], int(row[1]))] = row
    return found


def lag_by_partition(output: str, topic: str) -> dict[int, int]:
    """The LAG column of ``spate groups describe`` for one topic, by partition."""
    return {partition: int(row[4]) for (name, partition), row in partition_rows(output).items() if name == topic}


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]
