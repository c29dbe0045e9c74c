"""Where a table view stands in its topic: one Delta app transaction per partition.

A table view (:mod:`.view_table`) stores, for each partition of its topic,
the next offset to read as the ``txn`` action ``(app id, version)`` of the
Delta protocol, with ``app id = spate-table-view:<topic>:<partition>`` and
``version = next offset``. The ``txn`` actions go in the same commit as the
rows they account for, so "these records are applied" and "read on from
here" become true together: a run killed anywhere resumes from the last
commit and applies no record twice.

This module is pure: the app ids, and the plan of offset ranges a run
applies, one commit per slice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Mapping, Sequence

APP_ID_PREFIX = "spate-table-view"


def app_id(topic: str, partition: int) -> str:
    """The app transaction id under which a view stores its next offset of ``topic``'s ``partition``."""
    return f"{APP_ID_PREFIX}:{topic}:{partition}"


@dataclass(frozen=True, order=True)
class OffsetRange:
    """Offsets ``start`` (inclusive) to ``end`` (exclusive) of one partition."""

    partition: int
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise ValueError(f"partition {self.partition}: bad offset range [{self.start}, {self.end})")

    @property
    def size(self) -> int:
        return self.end - self.start


def plan_slices(starts: Mapping[int, int], ends: Mapping[int, int],
                max_offsets_per_commit: int | None = None) -> list[tuple[OffsetRange, ...]]:
    """The ranges each commit applies, in order: from ``starts`` up to ``ends``, at most
    ``max_offsets_per_commit`` offsets of each partition per commit (None: everything in one commit).

    A partition already at its end is in no slice; no slice is empty.
    """
    if max_offsets_per_commit is not None and max_offsets_per_commit <= 0:
        raise ValueError(f"max offsets per commit must be positive, not {max_offsets_per_commit}")
    position = {p: starts[p] for p in sorted(ends) if ends[p] > starts[p]}
    slices = []
    while position:
        ranges = []
        for partition, start in sorted(position.items()):
            end = ends[partition] if max_offsets_per_commit is None else min(ends[partition],
                                                                              start + max_offsets_per_commit)
            ranges.append(OffsetRange(partition, start, end))
        slices.append(tuple(ranges))
        position = {r.partition: r.end for r in ranges if r.end < ends[r.partition]}
    return slices


def spark_offsets_json(topic: str, offsets: Mapping[int, int]) -> str:
    """``startingOffsets`` / ``endingOffsets`` of the spate source: ``{"topic": {"0": 42, ...}}``."""
    return json.dumps({topic: {str(p): o for p, o in sorted(offsets.items())}})


def describe(ranges: Sequence[OffsetRange]) -> str:
    """The ranges as the commit's metadata records them: ``{"0": [start, end], ...}`` as JSON."""
    return json.dumps({str(r.partition): [r.start, r.end] for r in ranges}, separators=(",", ":"))
