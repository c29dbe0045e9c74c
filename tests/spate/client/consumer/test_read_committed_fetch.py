"""read_committed filtering in the consumer, against a scripted broker answering one synthetic fetch.

The partition holds, by offset::

    0-1  producer 7, transactional   (aborted: listed in aborted_transactions)
    2-3  producer 8, transactional   (committed)
    4    producer 8 COMMIT marker
    5    producer 7 ABORT marker
    6-7  no producer (plain records)
    8-9  producer 7, transactional   (its next transaction, after the abort marker: committed)
    10   producer 7 COMMIT marker
    11-12 producer 9, transactional  (aborted, but its range is listed before producer 7's)
    13   producer 9 ABORT marker

Kafka's rule: an aborted range opens for its producer at ``first_offset``
and closes at that producer's ABORT marker; transactional batches of the
producer inside it are dropped. Markers are never returned. Positions move
past everything fetched, shown or not.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from spate.client import Consumer, TopicPartition
from spate.protocol import ApiKey
from spate.protocol.messages.fetch import FetchResponse
from spate.protocol.messages.metadata import MetadataResponse
from spate.records.builder import build_batch
from spate.records.control import ControlType, build_control_batch
from spate.records.record import Record
from tests.spate.client.fake_broker import SILENT, FakeBroker

TOPIC = "txn-data"
TP = TopicPartition(TOPIC, 0)
END = 14


def data(first: int, count: int, producer_id: int | None) -> bytes:
    records = [Record(first + i, 1_000 + first + i, None, f"v{first + i}".encode()) for i in range(count)]
    if producer_id is None:
        return build_batch(records, base_offset=first)
    return build_batch(records, base_offset=first, producer_id=producer_id, producer_epoch=0, base_sequence=first,
                       is_transactional=True)


def marker(offset: int, kind: ControlType, producer_id: int) -> bytes:
    return build_control_batch(kind, producer_id, 0, 0, timestamp=2_000, base_offset=offset)


LOG = b"".join([
    data(0, 2, 7),
    data(2, 2, 8),
    marker(4, ControlType.COMMIT, 8),
    marker(5, ControlType.ABORT, 7),
    data(6, 2, None),
    data(8, 2, 7),
    marker(10, ControlType.COMMIT, 7),
    data(11, 2, 9),
    marker(13, ControlType.ABORT, 9),
])
# Listed out of order on purpose: the consumer must order them by first offset.
ABORTED = [(9, 11), (7, 0)]
COMMITTED_VALUES = [b"v2", b"v3", b"v6", b"v7", b"v8", b"v9"]
ALL_VALUES = [f"v{o}".encode() for o in (0, 1, 2, 3, 6, 7, 8, 9, 11, 12)]


def answer(port: int, key: ApiKey, version: int, body: Any) -> Any:
    if key == ApiKey.METADATA:
        M = MetadataResponse
        return M(
            brokers=[M.MetadataResponseBroker(node_id=0, host="127.0.0.1", port=port)],
            controller_id=0,
            topics=[M.MetadataResponseTopic(error_code=0, name=TOPIC, is_internal=False, partitions=[
                M.MetadataResponsePartition(error_code=0, partition_index=0, leader_id=0, leader_epoch=0,
                                            replica_nodes=[0], isr_nodes=[0])
            ])],
        )
    if key == ApiKey.FETCH:
        F = FetchResponse
        wanted = body.topics[0].partitions[0]
        at_start = wanted.fetch_offset == 0
        read_committed = body.isolation_level == 1
        aborted = [F.AbortedTransaction(producer_id=p, first_offset=o) for p, o in ABORTED] if read_committed else None
        partition = F.PartitionData(
            partition_index=0, error_code=0, high_watermark=END, last_stable_offset=END, log_start_offset=0,
            aborted_transactions=aborted if at_start else ([] if read_committed else None),
            records=LOG if at_start else b"",
        )
        return F(throttle_time_ms=0, responses=[F.FetchableTopicResponse(topic=TOPIC, partitions=[partition])])
    return SILENT


@pytest.fixture
def broker() -> Iterator[FakeBroker]:
    fake = FakeBroker()
    fake.handler = lambda key, version, body: answer(fake.port, key, version, body)
    yield fake
    fake.stop()


def consumer(broker: FakeBroker, isolation_level: str) -> Consumer:
    c = Consumer(broker.bootstrap, isolation_level=isolation_level, fetch_max_wait_ms=10)
    c.assign([TP])
    c.seek(TP, 0)
    return c


def poll_records(c: Consumer) -> list:
    records: list = []
    for _ in range(20):
        records += c.poll(timeout_ms=50)
        if c.position(TP) == END:
            break
    return records


def test_read_committed_poll_drops_aborted_transactions_and_markers_and_moves_past_them(broker: FakeBroker) -> None:
    with consumer(broker, "read_committed") as c:
        records = poll_records(c)
        assert [r.value for r in records] == COMMITTED_VALUES
        assert [r.offset for r in records] == [2, 3, 6, 7, 8, 9]
        assert c.position(TP) == END


def test_read_uncommitted_poll_returns_aborted_records_but_never_markers(broker: FakeBroker) -> None:
    with consumer(broker, "read_uncommitted") as c:
        assert [r.value for r in poll_records(c)] == ALL_VALUES
        assert c.position(TP) == END


def test_read_committed_poll_batches_filters_whole_batches_the_same_way(broker: FakeBroker) -> None:
    with consumer(broker, "read_committed") as c:
        batches: list = []
        for _ in range(20):
            batches += c.poll_batches(timeout_ms=50)
            if c.position(TP) == END:
                break
        assert [list(b.offsets) for b in batches] == [[2, 3], [6, 7], [8, 9]]
        assert [v for b in batches for v in b.values] == COMMITTED_VALUES
        assert c.position(TP) == END


def poll_raw(c: Consumer) -> list:
    batches: list = []
    for _ in range(20):
        batches += c.poll_raw_batches(timeout_ms=50)
        if c.position(TP) == END:
            break
    return batches


def test_read_committed_poll_raw_batches_hands_out_only_committed_data_batches(broker: FakeBroker) -> None:
    with consumer(broker, "read_committed") as c:
        batches = poll_raw(c)
        assert [(b.header.base_offset, b.start_offset, b.next_offset) for b in batches] == [(2, 2, 4), (6, 6, 8),
                                                                                             (8, 8, 10)]
        assert all(not b.header.is_control for b in batches)
        assert c.position(TP) == END


def test_read_uncommitted_poll_raw_batches_keeps_aborted_data_but_never_markers(broker: FakeBroker) -> None:
    with consumer(broker, "read_uncommitted") as c:
        assert [b.header.base_offset for b in poll_raw(c)] == [0, 2, 6, 8, 11]
        assert c.position(TP) == END


def test_raw_batches_after_single_records_start_where_the_records_stopped(broker: FakeBroker) -> None:
    with consumer(broker, "read_uncommitted") as c:
        first: list = []
        for _ in range(20):
            first = c.poll(timeout_ms=50, max_records=1)
            if first:
                break
        assert [r.offset for r in first] == [0]
        rest = c.poll_raw_batches(timeout_ms=50)
        assert [(b.header.base_offset, b.start_offset) for b in rest][:2] == [(0, 1), (2, 2)]
        assert c.position(TP) == END
