"""Where a read starts or ends, as the user asked for it (before any broker is asked).

* :class:`Earliest` / :class:`Latest`: the log start / the end (high
  watermark, or last stable offset under read_committed) of every partition.
* :class:`SpecificOffsets`: offset JSON; -2 and -1 inside it mean earliest
  and latest for that partition.
* :class:`SpecificTimestamps`: per-partition timestamps (ms): the first
  offset whose record timestamp is at least the given one.
* :class:`GlobalTimestamp`: one timestamp for every partition.

``option`` on the JSON and timestamp specs names the option the value came
from, so that later errors (a partition missing from the JSON, no record at
a timestamp) can name it too.
"""

from __future__ import annotations

from dataclasses import dataclass

from spate.client import TopicPartition


@dataclass(frozen=True, slots=True)
class Earliest:
    pass


@dataclass(frozen=True, slots=True)
class Latest:
    pass


@dataclass(frozen=True, slots=True)
class SpecificOffsets:
    offsets: dict[TopicPartition, int]
    option: str


@dataclass(frozen=True, slots=True)
class SpecificTimestamps:
    timestamps: dict[TopicPartition, int]
    option: str


@dataclass(frozen=True, slots=True)
class GlobalTimestamp:
    timestamp: int
    option: str


OffsetSpec = Earliest | Latest | SpecificOffsets | SpecificTimestamps | GlobalTimestamp
