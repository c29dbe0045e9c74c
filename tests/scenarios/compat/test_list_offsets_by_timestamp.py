"""ListOffsets by timestamp (offsets_for_times) returns the first offset whose timestamp is at or after the query.

The log is built from several batches with out-of-order timestamps inside and
across batches, some compressed, so the broker must look inside batches rather
than trust their first or last record.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest

from tests.scenarios.compat.clients import DRIVERS, ConfluentDriver, OutgoingRecord
from tests.scenarios.compat.sample_records import recent_base_ms
from tests.support.broker_under_test import (
    TANSU_LIST_OFFSETS_BY_TIME_BUG,
    require_spate,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

# Timestamp offsets (ms after a base) of each batch, in produce order, and the codec of each batch.
BATCHES: list[tuple[str, list[int]]] = [
    ("none", [100, 300, 200]),
    ("gzip", [400, 400, 500]),
    ("lz4", [450, 700]),
    ("none", [600]),
    ("zstd", [800, 750, 900, 900]),
]


@dataclass(frozen=True)
class TimedLog:
    topic: str
    timestamps: list[int]  # absolute timestamp of each offset of partition 0

    def first_offset_at_or_after(self, query_ms: int) -> int | None:
        return next((offset for offset, ts in enumerate(self.timestamps) if ts >= query_ms), None)


@pytest.fixture(scope="module")
def timed_log(broker, broker_kind: str) -> TimedLog:
    """Partition 0 holds the batches above; partition 1 stays empty."""
    require_spate(broker_kind, TANSU_LIST_OFFSETS_BY_TIME_BUG)
    producer = ConfluentDriver(broker.bootstrap)
    topic = f"timed-{uuid.uuid4().hex[:8]}"
    producer.create_topic(topic, 2)
    base = recent_base_ms()
    timestamps = []
    for codec, offsets in BATCHES:
        records = [
            OutgoingRecord(f"k{len(timestamps) + i}".encode(), b"v", (), base + ts) for i, ts in enumerate(offsets)
        ]
        placements = producer.produce(topic, records, codec=codec, partition=0)
        if [p.offset for p in placements] != list(range(len(timestamps), len(timestamps) + len(records))):
            raise AssertionError(f"setup: unexpected placements {placements}")
        timestamps += [base + ts for ts in offsets]
    return TimedLog(topic, timestamps)


def queries(log: TimedLog) -> list[int]:
    """Every stored timestamp, one before and one after each, and points beyond both ends."""
    points = {ts + delta for ts in log.timestamps for delta in (-1, 0, 1)}
    return sorted(points | {log.timestamps[0] - 10_000, max(log.timestamps) + 10_000})


@pytest.mark.parametrize("client", list(DRIVERS))
def test_lookup_returns_first_offset_with_timestamp_at_or_after_query(timed_log: TimedLog, broker, client: str) -> None:
    driver = DRIVERS[client](broker.bootstrap)
    mismatches = []
    for query in queries(timed_log):
        expected = timed_log.first_offset_at_or_after(query)
        found = driver.offset_for_time(timed_log.topic, 0, query)
        got = None if found is None else found.offset
        if got != expected:
            mismatches.append((query - timed_log.timestamps[0], expected, got))
        elif found is not None and found.timestamp_ms is not None and found.timestamp_ms != timed_log.timestamps[got]:
            mismatches.append(
                (query - timed_log.timestamps[0], f"timestamp {timed_log.timestamps[got]}", found.timestamp_ms)
            )
    assert not mismatches, f"(query relative to first record, expected, got): {mismatches}"


@pytest.mark.parametrize("client", list(DRIVERS))
def test_lookup_on_empty_partition_finds_nothing(timed_log: TimedLog, broker, client: str) -> None:
    driver = DRIVERS[client](broker.bootstrap)
    assert driver.offset_for_time(timed_log.topic, 1, timed_log.timestamps[0]) is None
