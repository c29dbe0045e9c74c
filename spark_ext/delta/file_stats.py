"""Per-file statistics of the Delta log (the ``add`` action's ``stats`` JSON).

Readers skip files by these, so every value written must bound the file's
data exactly: ``numRecords`` always; ``nullCount`` for top-level columns of a
primitive type; ``minValues``/``maxValues`` only for integers, dates and
strings of at most 32 characters (longer strings would need Delta's
truncation rules, floats their NaN rules and timestamps a precision the
JSON does not keep, so those are left out — a reader then just reads the file).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

MAX_STRING_STAT = 32


@dataclass
class FileStats:
    """Running statistics of one file, fed each record batch written to it."""

    num_records: int = 0
    null_count: dict[str, int] = field(default_factory=dict)
    min_values: dict[str, Any] = field(default_factory=dict)
    max_values: dict[str, Any] = field(default_factory=dict)
    _no_bounds: set[str] = field(default_factory=set)

    def add(self, batch: pa.RecordBatch) -> None:
        self.num_records += batch.num_rows
        for name, column in zip(batch.schema.names, batch.columns):
            kind = column.type
            if pa.types.is_nested(kind):
                continue
            self.null_count[name] = self.null_count.get(name, 0) + column.null_count
            if _has_bounds(kind) and name not in self._no_bounds:
                self._bound(name, column)

    def _bound(self, name: str, column: pa.Array) -> None:
        if column.null_count == len(column):
            return
        bounds = pc.min_max(column)
        low, high = bounds["min"].as_py(), bounds["max"].as_py()
        if isinstance(low, str) and (len(low) > MAX_STRING_STAT or len(high) > MAX_STRING_STAT):
            self._drop_bounds(name)
            return
        if name not in self.min_values or low < self.min_values[name]:
            self.min_values[name] = low
        if name not in self.max_values or high > self.max_values[name]:
            self.max_values[name] = high

    def _drop_bounds(self, name: str) -> None:
        self._no_bounds.add(name)
        self.min_values.pop(name, None)
        self.max_values.pop(name, None)

    def to_json(self) -> str:
        stats: dict[str, Any] = {"numRecords": self.num_records}
        if self.min_values:
            stats["minValues"] = {k: _json_value(v) for k, v in self.min_values.items()}
            stats["maxValues"] = {k: _json_value(v) for k, v in self.max_values.items()}
        if self.null_count:
            stats["nullCount"] = self.null_count
        return json.dumps(stats, separators=(",", ":"))


def _has_bounds(kind: pa.DataType) -> bool:
    return pa.types.is_integer(kind) or pa.types.is_date32(kind) or pa.types.is_string(kind)


def _json_value(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value
