"""WriteTxnMarkers on a running broker: sent the way another broker's transaction coordinator sends it.

The transactional data goes in through Produce (or TxnOffsetCommit); the
marker comes over the wire as WriteTxnMarkers v1, and read_committed
fetches (or OffsetFetch) show what it ended.
"""

from __future__ import annotations

import time
from typing import Any

from broker_core.coordinator.partitioning import partition_for
from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from spate.protocol.messages.end_txn import EndTxnRequest
from spate.protocol.messages.init_producer_id import InitProducerIdRequest
from spate.protocol.messages.metadata import MetadataRequest
from spate.protocol.messages.offset_fetch import OffsetFetchRequest
from spate.protocol.messages.txn_offset_commit import TxnOffsetCommitRequest
from spate.protocol.messages.write_txn_markers import WriteTxnMarkersRequest
from spate.records import Record, build_batch
from spate.structs import IsolationLevel
from tests.broker.server.test_read_committed import (
    NOW,
    batch_offsets,
    create_topic,
    fetch,
    new_producer_id,
    produce,
)
from tests.support.raw_client import RawClient

E = ErrorCode
Q = WriteTxnMarkersRequest
CONSUMER_OFFSETS = "__consumer_offsets"


def transactional(pid: int, epoch: int, sequence: int, *values: bytes) -> bytes:
    records = [Record(offset=i, timestamp=NOW, key=None, value=v) for i, v in enumerate(values)]
    return build_batch(records, producer_id=pid, producer_epoch=epoch, base_sequence=sequence, is_transactional=True)


def write_markers(raw: RawClient, *markers: tuple[int, int, bool, int, dict[str, list[int]]]) -> dict:
    """Send WriteTxnMarkers v1; returns {(producer id, topic, partition): code}."""
    body = Q(markers=[
        Q.WritableTxnMarker(producer_id=pid, producer_epoch=epoch, transaction_result=commit,
                            topics=[Q.WritableTxnMarkerTopic(name=name, partition_indexes=indexes)
                                    for name, indexes in topics.items()],
                            coordinator_epoch=coordinator_epoch)
        for pid, epoch, commit, coordinator_epoch, topics in markers
    ])
    response = raw.call(ApiKey.WRITE_TXN_MARKERS, 1, body)
    return {(m.producer_id, t.name, p.partition_index): E(p.error_code)
            for m in response.markers for t in m.topics for p in t.partitions}


def test_a_commit_marker_makes_the_transaction_visible_to_read_committed(raw: RawClient) -> None:
    topic = "wtm-commit"
    create_topic(raw, topic)
    pid = new_producer_id(raw)
    assert produce(raw, topic, transactional(pid, 0, 0, b"a", b"b")).error_code == E.NONE
    assert batch_offsets(fetch(raw, topic, 0, IsolationLevel.READ_COMMITTED).records) == []
    answer = write_markers(raw, (pid, 0, True, 0, {topic: [0, 5], "wtm-missing": [0]}))
    assert answer == {
        (pid, topic, 0): E.NONE,
        (pid, topic, 5): E.UNKNOWN_TOPIC_OR_PARTITION,
        (pid, "wtm-missing", 0): E.UNKNOWN_TOPIC_OR_PARTITION,
    }
    committed = fetch(raw, topic, 0, IsolationLevel.READ_COMMITTED)
    assert batch_offsets(committed.records) == [0, 2]  # the data, then the marker (clients skip it)
    assert committed.last_stable_offset == committed.high_watermark == 3
    assert committed.aborted_transactions == []


def test_an_abort_marker_lists_the_transaction_as_aborted(raw: RawClient) -> None:
    topic = "wtm-abort"
    create_topic(raw, topic)
    pid = new_producer_id(raw)
    produce(raw, topic, transactional(pid, 0, 0, b"gone"))
    assert write_markers(raw, (pid, 0, False, 0, {topic: [0]})) == {(pid, topic, 0): E.NONE}
    answer = fetch(raw, topic, 0, IsolationLevel.READ_COMMITTED)
    assert answer.last_stable_offset == answer.high_watermark == 2
    assert [(a.producer_id, a.first_offset) for a in answer.aborted_transactions] == [(pid, 0)]


def test_markers_of_several_producers_in_one_request_are_answered_each(raw: RawClient) -> None:
    topic = "wtm-many"
    create_topic(raw, topic)
    first, second = new_producer_id(raw), new_producer_id(raw)
    produce(raw, topic, transactional(first, 0, 0, b"1"))
    produce(raw, topic, transactional(second, 0, 0, b"2"))
    answer = write_markers(raw, (first, 0, True, 0, {topic: [0]}), (second, 0, False, 0, {topic: [0]}))
    assert answer == {(first, topic, 0): E.NONE, (second, topic, 0): E.NONE}
    committed = fetch(raw, topic, 0, IsolationLevel.READ_COMMITTED)
    assert committed.last_stable_offset == committed.high_watermark == 4
    assert [a.producer_id for a in committed.aborted_transactions] == [second]


def test_markers_of_a_fenced_producer_or_coordinator_are_refused(raw: RawClient) -> None:
    topic = "wtm-fenced"
    create_topic(raw, topic)
    pid = new_producer_id(raw)
    produce(raw, topic, transactional(pid, 1, 0, b"x"))
    assert write_markers(raw, (pid, 0, True, 0, {topic: [0]})) == {(pid, topic, 0): E.INVALID_PRODUCER_EPOCH}
    assert write_markers(raw, (pid, 1, True, 5, {topic: [0]})) == {(pid, topic, 0): E.NONE}
    assert write_markers(raw, (pid, 1, True, 3, {topic: [0]})) == {(pid, topic, 0): E.TRANSACTION_COORDINATOR_FENCED}


def _init_transactional(raw: RawClient, transactional_id: str) -> Any:
    deadline = time.monotonic() + 20
    while True:
        answer = raw.call(ApiKey.INIT_PRODUCER_ID, 1,
                          InitProducerIdRequest(transactional_id=transactional_id, transaction_timeout_ms=60_000))
        if answer.error_code != E.COORDINATOR_LOAD_IN_PROGRESS or time.monotonic() > deadline:
            assert answer.error_code == E.NONE
            return answer
        time.sleep(0.05)


def _committed_offset(raw: RawClient, group: str, topic: str) -> int:
    body = OffsetFetchRequest(group_id=group, topics=[OffsetFetchRequest.OffsetFetchRequestTopic(
        name=topic, partition_indexes=[0])])
    return raw.call(ApiKey.OFFSET_FETCH, 5, body).topics[0].partitions[0].committed_offset


def test_a_marker_in_consumer_offsets_ends_the_groups_transactional_offsets(raw: RawClient) -> None:
    topic, group, transactional_id = "wtm-offsets", "wtm-group", "wtm-copier"
    create_topic(raw, topic)
    producer = _init_transactional(raw, transactional_id)
    pid, epoch = producer.producer_id, producer.producer_epoch
    added = raw.call(ApiKey.ADD_OFFSETS_TO_TXN, 2, AddOffsetsToTxnRequest(
        transactional_id=transactional_id, producer_id=pid, producer_epoch=epoch, group_id=group))
    assert added.error_code == E.NONE
    commit = TxnOffsetCommitRequest(
        transactional_id=transactional_id, group_id=group, producer_id=pid, producer_epoch=epoch,
        topics=[TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic(name=topic, partitions=[
            TxnOffsetCommitRequest.TxnOffsetCommitRequestPartition(
                partition_index=0, committed_offset=42, committed_leader_epoch=-1, committed_metadata="")])])
    assert raw.call(ApiKey.TXN_OFFSET_COMMIT, 2, commit).topics[0].partitions[0].error_code == E.NONE
    assert _committed_offset(raw, group, topic) == -1
    metadata = raw.call(ApiKey.METADATA, 1, MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(name=CONSUMER_OFFSETS)]))
    offsets_partition = partition_for(group, len(metadata.topics[0].partitions))
    answer = write_markers(raw, (pid, epoch, True, 0, {CONSUMER_OFFSETS: [offsets_partition]}))
    assert answer == {(pid, CONSUMER_OFFSETS, offsets_partition): E.NONE}
    assert _committed_offset(raw, group, topic) == 42
    # The coordinator ends the transaction too: its marker comes again and changes nothing.
    ended = raw.call(ApiKey.END_TXN, 2, EndTxnRequest(transactional_id=transactional_id, producer_id=pid,
                                                      producer_epoch=epoch, committed=True))
    assert ended.error_code == E.NONE
    assert _committed_offset(raw, group, topic) == 42

