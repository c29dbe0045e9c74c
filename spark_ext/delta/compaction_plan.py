"""Which files of a Delta table a compaction rewrites together: bin-packing per partition.

Pure: takes the table's current files (path, size, partition values,
modification time) and a target size; returns bins. Files at or above the
target are left alone; the rest are packed, within their partition and in
the order they were written (so rows that arrived together stay together),
into bins of at most the target size. A bin of a single file would rewrite
it unchanged, so there is none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping


@dataclass(frozen=True)
class TableFile:
    """A file of the table's current version, its path as the file system names it (not URI-escaped)."""

    path: str
    size: int
    partition_values: Mapping[str, str | None]
    modification_time: int = 0

    @property
    def partition_key(self) -> tuple:
        return tuple(sorted(self.partition_values.items()))

    @property
    def directory(self) -> str:
        return self.path.rpartition("/")[0]


@dataclass(frozen=True)
class Bin:
    files: tuple[TableFile, ...]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def partition_values(self) -> Mapping[str, str | None]:
        return self.files[0].partition_values


def plan_bins(files: Iterable[TableFile], target_size: int) -> list[Bin]:
    """Bins of two or more small files of one partition, each of at most ``target_size`` bytes."""
    if target_size <= 0:
        raise ValueError(f"the target file size must be positive, not {target_size}")
    by_partition: dict[tuple, list[TableFile]] = {}
    for file in files:
        if file.size < target_size:
            by_partition.setdefault(file.partition_key, []).append(file)
    bins = []
    for key in sorted(by_partition, key=repr):
        current: list[TableFile] = []
        for file in sorted(by_partition[key], key=lambda f: (f.modification_time, f.path)):
            if current and sum(f.size for f in current) + file.size > target_size:
                bins.append(current)
                current = []
            current.append(file)
        bins.append(current)
    return [Bin(tuple(b)) for b in bins if len(b) > 1]
