"""Fetch sessions over the wire: a full fetch opens a session, incremental fetches answer only what changed."""

from __future__ import annotations

import time
from typing import Any

from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.create_topics import CreateTopicsRequest
from spate.protocol.messages.fetch import FetchRequest as Q
from spate.protocol.messages.produce import ProduceRequest
from spate.records import Record, build_batch
from tests.support.raw_client import RawClient

PARTITIONS = 20


def create_topic(raw: RawClient, name: str) -> None:
    body = CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
        name=name, num_partitions=PARTITIONS, replication_factor=1, assignments=[], configs=[])], timeout_ms=5000)
    assert raw.call(ApiKey.CREATE_TOPICS, 4, body).topics[0].error_code == ErrorCode.NONE


def produce(raw: RawClient, topic: str, partition: int) -> None:
    batch = build_batch([Record(offset=0, timestamp=1_700_000_000_000, key=None, value=b"v")])
    body = ProduceRequest(acks=1, timeout_ms=5000, topic_data=[ProduceRequest.TopicProduceData(
        name=topic, partition_data=[ProduceRequest.PartitionProduceData(index=partition, records=batch)])])
    assert raw.call(ApiKey.PRODUCE, 7, body).responses[0].partition_responses[0].error_code == ErrorCode.NONE


def fetch(raw: RawClient, topic: str, session_id: int, epoch: int, offsets: dict[int, int]) -> Any:
    parts = [Q.FetchPartition(partition=p, fetch_offset=o, partition_max_bytes=1 << 20) for p, o in offsets.items()]
    body = Q(max_wait_ms=0, min_bytes=1, session_id=session_id, session_epoch=epoch,
             topics=[Q.FetchTopic(topic=topic, partitions=parts)] if parts else [], forgotten_topics_data=[])
    return raw.call(ApiKey.FETCH, 11, body)


def partitions_in(response: Any) -> list[int]:
    return sorted(p.partition_index for t in response.responses for p in t.partitions)


def test_an_incremental_fetch_answers_only_the_partition_that_got_data(raw: RawClient) -> None:
    create_topic(raw, "sessions-a")
    full = fetch(raw, "sessions-a", 0, 0, dict.fromkeys(range(PARTITIONS), 0))
    assert full.error_code == ErrorCode.NONE and full.session_id > 0
    assert partitions_in(full) == list(range(PARTITIONS))
    quiet = fetch(raw, "sessions-a", full.session_id, 1, {})
    assert (quiet.error_code, quiet.session_id, quiet.responses) == (ErrorCode.NONE, full.session_id, [])
    produce(raw, "sessions-a", 7)
    news = fetch(raw, "sessions-a", full.session_id, 2, {})
    assert partitions_in(news) == [7]
    assert news.responses[0].partitions[0].high_watermark == 1 and len(news.responses[0].partitions[0].records)
    moved = fetch(raw, "sessions-a", full.session_id, 3, {7: 1})
    assert moved.responses == []


def test_a_wrong_epoch_or_an_unknown_session_is_a_top_level_error(raw: RawClient) -> None:
    create_topic(raw, "sessions-b")
    full = fetch(raw, "sessions-b", 0, 0, {0: 0})
    assert fetch(raw, "sessions-b", full.session_id, 5, {}).error_code == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    assert fetch(raw, "sessions-b", 0x7FFFFFF0, 1, {}).error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


def test_a_legacy_fetch_gets_no_session(raw: RawClient) -> None:
    create_topic(raw, "sessions-c")
    assert fetch(raw, "sessions-c", 0, -1, {0: 0}).session_id == 0


def test_a_final_fetch_closes_the_session_and_is_answered_at_once_without_one(raw: RawClient) -> None:
    create_topic(raw, "sessions-d")
    full = fetch(raw, "sessions-d", 0, 0, {0: 0})
    # A Java consumer closes its sessions with its own fetch.max.wait.ms: nothing to read must not wait for it.
    closing = Q(max_wait_ms=10_000, min_bytes=1, session_id=full.session_id, session_epoch=-1, topics=[],
                forgotten_topics_data=[])
    started = time.monotonic()
    closed = raw.call(ApiKey.FETCH, 11, closing)
    assert time.monotonic() - started < 5
    assert (closed.error_code, closed.session_id, closed.responses) == (ErrorCode.NONE, 0, [])
    assert fetch(raw, "sessions-d", full.session_id, 1, {}).error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
