"""ListOffsets v0's answer: segment base offsets before a time, newest first.

Before message timestamps (ListOffsets v1, KIP-79), a client asked for "up
to N offsets before time T" and the broker answered from its segment files:
each segment's base offset with the file's last-modified time, plus the log
end offset at the current time when the active segment holds data. Latest
(-1) starts from the newest entry, earliest (-2) from the oldest, and a time
from the newest entry modified at or before it; the answer lists that entry's
offset and older ones, at most ``max_num_offsets``. Kafka 3.9 still answers
v0 this way.
"""

from __future__ import annotations

import os
from typing import Sequence

from broker_core.storage.segment import SegmentInfo

LATEST = -1
EARLIEST = -2


def offsets_before(
    segments: Sequence[SegmentInfo], log_start_offset: int, log_end_offset: int, timestamp: int, max_num_offsets: int,
    now_ms: int,
) -> list[int]:
    """The offsets ListOffsets v0 answers, newest first (see the module doc)."""
    entries = [(max(segment.base_offset, log_start_offset), _last_modified_ms(segment)) for segment in segments]
    if segments and segments[-1].size > 0:
        entries.append((log_end_offset, now_ms))
    if timestamp == LATEST:
        start = len(entries) - 1
    elif timestamp == EARLIEST:
        start = 0 if entries else -1
    else:
        start = next((i for i in range(len(entries) - 1, -1, -1) if entries[i][1] <= timestamp), -1)
    count = max(0, min(max_num_offsets, start + 1))
    return [entries[start - i][0] for i in range(count)]


def capped_at(offsets: list[int], high_watermark: int) -> list[int]:
    """What a consumer is told: nothing past the high watermark, which stands in for what is above it."""
    if not any(offset > high_watermark for offset in offsets):
        return offsets
    below = [offset for offset in offsets if offset <= high_watermark]
    return [high_watermark, *below]


def _last_modified_ms(segment: SegmentInfo) -> int:
    try:
        return os.stat(segment.path).st_mtime_ns // 1_000_000
    except FileNotFoundError:  # deleted by retention since the list was taken
        return -1
