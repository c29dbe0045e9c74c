"""read_committed over the wire: Fetch and ListOffsets stop at the LSO, aborts are listed.

The transactional data goes in through Produce like any client's; the
markers are written in-process on the broker's event loop, as the
transaction coordinator writes them, so these tests need no coordinator.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

import pytest

from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.create_topics import CreateTopicsRequest
from spate.protocol.messages.fetch import FetchRequest
from spate.protocol.messages.init_producer_id import InitProducerIdRequest
from spate.protocol.messages.list_offsets import ListOffsetsRequest
from spate.protocol.messages.produce import ProduceRequest
from spate.records import (
    ControlType,
    Record,
    build_batch,
    build_control_batch,
    iter_batches,
)
from spate.structs import IsolationLevel
from tests.support.raw_client import RawClient

NOW = 1_700_000_000_000


def create_topic(raw: RawClient, name: str) -> None:
    body = CreateTopicsRequest(
        topics=[CreateTopicsRequest.CreatableTopic(name=name, num_partitions=1, replication_factor=1,
                                                   assignments=[], configs=[])],
        timeout_ms=5000,
    )
    assert raw.call(ApiKey.CREATE_TOPICS, 4, body).topics[0].error_code == ErrorCode.NONE


def produce(raw: RawClient, topic: str, batch: bytes) -> Any:
    body = ProduceRequest(
        acks=-1,
        timeout_ms=5000,
        topic_data=[ProduceRequest.TopicProduceData(
            name=topic, partition_data=[ProduceRequest.PartitionProduceData(index=0, records=batch)])],
    )
    return raw.call(ApiKey.PRODUCE, 7, body).responses[0].partition_responses[0]


def fetch_body(topic: str, offset: int, isolation_level: int, *, max_wait_ms: int = 0) -> FetchRequest:
    return FetchRequest(
        max_wait_ms=max_wait_ms,
        min_bytes=1,
        isolation_level=isolation_level,
        topics=[FetchRequest.FetchTopic(topic=topic, partitions=[
            FetchRequest.FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)])],
        forgotten_topics_data=[],
    )


def fetch(raw: RawClient, topic: str, offset: int, isolation_level: int, *, version: int = 11) -> Any:
    return raw.call(ApiKey.FETCH, version, fetch_body(topic, offset, isolation_level)).responses[0].partitions[0]


def latest(raw: RawClient, topic: str, isolation_level: int) -> int:
    body = ListOffsetsRequest(
        isolation_level=isolation_level,
        topics=[ListOffsetsRequest.ListOffsetsTopic(name=topic, partitions=[
            ListOffsetsRequest.ListOffsetsPartition(partition_index=0, timestamp=-1)])],
    )
    answer = raw.call(ApiKey.LIST_OFFSETS, 5, body).topics[0].partitions[0]
    assert answer.error_code == ErrorCode.NONE
    return answer.offset


def batch_offsets(records: Any) -> list[int]:
    data = bytes(records or b"")
    return [header.base_offset for header in iter_batches(data)]


def new_producer_id(raw: RawClient) -> int:
    answer = raw.call(ApiKey.INIT_PRODUCER_ID, 1, InitProducerIdRequest(transactional_id=None,
                                                                       transaction_timeout_ms=60000))
    assert answer.error_code == ErrorCode.NONE
    return answer.producer_id


def transactional(pid: int, sequence: int, *values: bytes) -> bytes:
    records = [Record(offset=i, timestamp=NOW, key=None, value=v) for i, v in enumerate(values)]
    return build_batch(records, producer_id=pid, producer_epoch=0, base_sequence=sequence, is_transactional=True)


def plain(*values: bytes) -> bytes:
    return build_batch([Record(offset=i, timestamp=NOW, key=None, value=v) for i, v in enumerate(values)])


def on_broker_loop(broker: Any, job: Callable[[Any], Any]) -> Any:
    """Run ``job(replica_manager)`` on the broker's event loop, where partitions are written."""

    async def run() -> Any:
        return job(broker._broker.replicas)

    return asyncio.run_coroutine_threadsafe(run(), broker._loop).result(10)


def write_marker(broker: Any, topic: str, pid: int, *, commit: bool) -> int:
    def job(replicas: Any) -> int:
        partition = replicas.get(topic, 0)
        offset = partition.write_txn_marker(producer_id=pid, producer_epoch=0, coordinator_epoch=0, commit=commit)
        replicas.notify_append(partition)
        return offset

    return on_broker_loop(broker, job)


def test_open_transaction_holds_back_read_committed_fetch_and_list_offsets(raw):
    topic = "rc-open"
    create_topic(raw, topic)
    pid = new_producer_id(raw)
    assert produce(raw, topic, plain(b"before")).error_code == ErrorCode.NONE
    assert produce(raw, topic, transactional(pid, 0, b"t1", b"t2")).error_code == ErrorCode.NONE

    committed = fetch(raw, topic, 0, IsolationLevel.READ_COMMITTED)
    assert committed.error_code == ErrorCode.NONE
    assert batch_offsets(committed.records) == [0]
    assert committed.last_stable_offset == 1
    assert committed.high_watermark == 3
    assert committed.aborted_transactions == []
    assert batch_offsets(fetch(raw, topic, 1, IsolationLevel.READ_COMMITTED).records) == []

    uncommitted = fetch(raw, topic, 0, IsolationLevel.READ_UNCOMMITTED)
    assert batch_offsets(uncommitted.records) == [0, 1]
    assert uncommitted.aborted_transactions is None

    assert latest(raw, topic, IsolationLevel.READ_COMMITTED) == 1
    assert latest(raw, topic, IsolationLevel.READ_UNCOMMITTED) == 3


def test_abort_marker_is_listed_in_read_committed_fetch(raw, broker):
    topic = "rc-abort"
    create_topic(raw, topic)
    pid = new_producer_id(raw)
    produce(raw, topic, plain(b"before"))
    produce(raw, topic, transactional(pid, 0, b"t1", b"t2"))
    marker = write_marker(broker, topic, pid, commit=False)
    assert marker == 3

    for version in (4, 11):
        answer = fetch(raw, topic, 0, IsolationLevel.READ_COMMITTED, version=version)
        assert answer.error_code == ErrorCode.NONE
        assert batch_offsets(answer.records) == [0, 1, 3]
        assert answer.last_stable_offset == answer.high_watermark == 4
        assert [(a.producer_id, a.first_offset) for a in answer.aborted_transactions] == [(pid, 1)]

    after_abort = fetch(raw, topic, 4, IsolationLevel.READ_COMMITTED)
    assert after_abort.aborted_transactions == []
    assert fetch(raw, topic, 0, IsolationLevel.READ_UNCOMMITTED).aborted_transactions is None
    assert latest(raw, topic, IsolationLevel.READ_COMMITTED) == latest(raw, topic, IsolationLevel.READ_UNCOMMITTED) == 4


def test_commit_marker_releases_the_transaction_without_listing_it(raw, broker):
    topic = "rc-commit"
    create_topic(raw, topic)
    pid = new_producer_id(raw)
    produce(raw, topic, transactional(pid, 0, b"t1"))
    write_marker(broker, topic, pid, commit=True)
    answer = fetch(raw, topic, 0, IsolationLevel.READ_COMMITTED)
    assert batch_offsets(answer.records) == [0, 1]
    assert answer.last_stable_offset == 2
    assert answer.aborted_transactions == []


def test_parked_read_committed_fetch_wakes_when_a_marker_moves_the_lso(raw, broker):
    topic = "rc-long-poll"
    create_topic(raw, topic)
    pid = new_producer_id(raw)
    produce(raw, topic, transactional(pid, 0, b"t1"))
    waiting = RawClient(broker.bootstrap_servers, timeout=10)
    try:
        started = time.monotonic()
        waiting.send(ApiKey.FETCH, 11, fetch_body(topic, 0, IsolationLevel.READ_COMMITTED, max_wait_ms=10_000))
        time.sleep(0.2)
        write_marker(broker, topic, pid, commit=True)
        answer = waiting.receive().body.responses[0].partitions[0]
        elapsed = time.monotonic() - started
    finally:
        waiting.close()
    assert batch_offsets(answer.records) == [0, 1]
    assert elapsed < 5


@pytest.mark.parametrize("control_type", [ControlType.COMMIT, ControlType.ABORT])
def test_client_written_marker_is_refused_as_an_invalid_record(raw, control_type):
    topic = f"rc-client-marker-{control_type.name.lower()}"
    create_topic(raw, topic)
    answer = produce(raw, topic, build_control_batch(control_type, 1, 0, 0, timestamp=NOW))
    assert answer.error_code == ErrorCode.INVALID_RECORD
    assert latest(raw, topic, IsolationLevel.READ_UNCOMMITTED) == 0
