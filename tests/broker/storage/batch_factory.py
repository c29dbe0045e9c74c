"""Minimal RecordBatch v2 byte strings for storage tests.

Storage never decodes records, so the records section here is opaque filler;
only the 61-byte header and the CRC-32C over bytes 21..end are real.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crc32c import crc32c

if TYPE_CHECKING:
    from broker_core.storage.config import LogConfig
    from broker_core.storage.local_log import LocalLog

_BODY = struct.Struct(">hiqqqhii")
_PREFIX = struct.Struct(">qiibI")


def make_batch(
    *,
    base_offset: int = 0,
    records: int = 1,
    max_timestamp: int = 1_000,
    base_timestamp: int | None = None,
    payload_size: int = 16,
    fill: int = 0x5A,
    attributes: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    leader_epoch: int = -1,
    last_offset_delta: int | None = None,
) -> bytes:
    """One header-valid batch of ``records`` records and ``payload_size`` filler bytes."""
    delta = records - 1 if last_offset_delta is None else last_offset_delta
    first_ts = max_timestamp if base_timestamp is None else base_timestamp
    body = _BODY.pack(
        attributes, delta, first_ts, max_timestamp, producer_id, producer_epoch, base_sequence, records
    ) + bytes([fill & 0xFF]) * payload_size
    length = 4 + 1 + 4 + len(body)
    return _PREFIX.pack(base_offset, length, leader_epoch, 2, crc32c(body)) + body


@dataclass
class FakeClock:
    """A millisecond clock that moves only when told to."""

    now: int = 1_700_000_000_000

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> int:
        self.now += ms
        return self.now


def small_config(**overrides: object) -> "LogConfig":
    """A config whose limits tests can reach with a few hundred bytes."""
    from broker_core.storage.config import LogConfig

    values: dict[str, object] = dict(segment_bytes=1_000, index_interval_bytes=100, file_delete_delay_ms=60_000)
    values.update(overrides)
    return LogConfig(**values)  # type: ignore[arg-type]


def append_batches(log: "LocalLog", count: int, *, records: int = 2, payload_size: int = 40, clock: FakeClock | None = None) -> list[bytes]:
    """Append ``count`` batches with increasing timestamps; return them as stored."""
    stored = []
    for i in range(count):
        ts = (clock.now if clock is not None else 1_000) + i
        info = log.append(make_batch(records=records, max_timestamp=ts, payload_size=payload_size, fill=i))
        stored.append(read_batch(log, info.first_offset))
    return stored


def read_batch(log: "LocalLog", offset: int) -> bytes:
    """The bytes of the one batch holding ``offset``."""
    slice_ = log.read(offset, 1, min_one_batch=True)
    return slice_.read_bytes()


def read_all(log: "LocalLog", start: int | None = None) -> bytes:
    """Every byte from ``start`` (default: the log start) to the log end, read slice by slice."""
    offset = log.log_start_offset if start is None else start
    parts = []
    while offset < log.log_end_offset:
        slice_ = log.read(offset, 1 << 20)
        if slice_.is_empty:
            break
        parts.append(slice_.read_bytes())
        offset = slice_.next_offset
    return b"".join(parts)
