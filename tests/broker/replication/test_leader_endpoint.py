"""The follower's requests on the wire, against a scripted broker: versions, replica id, limits, answers, failures."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from broker_core.replication.leader_endpoint import (
    BrokerEndpoint,
    FetchPosition,
    FetchSettings,
    LeaderUnreachableError,
    RemoteLeaderEndpoint,
)
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.fetch import FetchResponse
from spate.protocol.messages.list_offsets import ListOffsetsResponse
from spate.protocol.messages.offset_for_leader_epoch import OffsetForLeaderEpochResponse
from spate.records import Record, build_batch
from spate.structs import TopicPartition
from tests.spate.client.fake_broker import CLOSE, SILENT, FakeBroker

T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)
SETTINGS = FetchSettings(max_wait_ms=250, min_bytes=3, max_bytes=4096, partition_max_bytes=1024,
                         request_timeout_ms=1000)
BATCH = build_batch([Record(0, 1, None, b"leader's batch")])


def endpoint_to(broker: FakeBroker) -> RemoteLeaderEndpoint:
    return RemoteLeaderEndpoint(BrokerEndpoint(1, "127.0.0.1", broker.port), node_id=7, client_id="broker-7-fetcher-0",
                                settings=SETTINGS)


def fetch_answer(body: Any) -> Any:
    R = FetchResponse
    return R(throttle_time_ms=0, error_code=0, session_id=0, responses=[
        R.FetchableTopicResponse(topic=topic.topic, partitions=[
            R.PartitionData(partition_index=p.partition, error_code=0 if topic.topic == "t" else 6,
                            high_watermark=10 + p.partition, last_stable_offset=10, log_start_offset=2,
                            aborted_transactions=None, records=BATCH if topic.topic == "t" else b"")
            for p in topic.partitions
        ])
        for topic in body.topics
    ])


def test_fetch_asks_as_a_replica_with_the_replica_fetch_limits_and_returns_the_records_unread() -> None:
    seen: list[tuple[int, Any]] = []

    def handler(key: ApiKey, version: int, body: Any) -> Any:
        seen.append((version, body))
        return fetch_answer(body)

    broker = FakeBroker(handler)
    try:
        async def scenario() -> dict:
            leader = endpoint_to(broker)
            try:
                return await leader.fetch({T0: FetchPosition(5, 3, 2), T1: FetchPosition(0, 3, 0),
                                           U0: FetchPosition(9, 4, 1)})
            finally:
                leader.close()

        answers = asyncio.run(scenario())
    finally:
        broker.stop()
    (version, body), = seen
    assert version == 11
    assert (body.replica_id, body.max_wait_ms, body.min_bytes, body.max_bytes) == (7, 250, 3, 4096)
    # The first fetch is a full one asking for a session (session 0, epoch 0).
    assert (body.isolation_level, body.session_id, body.session_epoch) == (0, 0, 0)
    asked = {(t.topic, p.partition): (p.fetch_offset, p.current_leader_epoch, p.log_start_offset, p.partition_max_bytes)
             for t in body.topics for p in t.partitions}
    assert asked == {("t", 0): (5, 3, 2, 1024), ("t", 1): (0, 3, 0, 1024), ("u", 0): (9, 4, 1, 1024)}
    assert bytes(answers[T0].records) == BATCH
    assert (answers[T1].error, answers[T1].high_watermark, answers[T1].log_start_offset) == (ErrorCode.NONE, 11, 2)
    assert answers[U0].error is ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_offset_for_leader_epoch_asks_as_a_replica_and_matches_answers_to_partitions() -> None:
    seen: list[tuple[int, Any]] = []

    def handler(key: ApiKey, version: int, body: Any) -> Any:
        seen.append((version, body))
        R = OffsetForLeaderEpochResponse
        return R(throttle_time_ms=0, topics=[R.OffsetForLeaderTopicResult(topic="t", partitions=[
            R.EpochEndOffset(error_code=0, partition=0, leader_epoch=2, end_offset=40),
        ])])

    broker = FakeBroker(handler)
    try:
        async def scenario() -> dict:
            leader = endpoint_to(broker)
            try:
                return await leader.fetch_epoch_end_offsets({T0: (5, 3), T1: (5, 4)})
            finally:
                leader.close()

        answers = asyncio.run(scenario())
    finally:
        broker.stop()
    (version, body), = seen
    assert version == 3 and body.replica_id == 7
    assert [(p.partition, p.current_leader_epoch, p.leader_epoch) for p in body.topics[0].partitions] == [
        (0, 5, 3), (1, 5, 4)]
    assert (answers[T0].error, answers[T0].leader_epoch, answers[T0].end_offset) == (ErrorCode.NONE, 2, 40)
    assert answers[T1].error is ErrorCode.UNKNOWN_SERVER_ERROR  # left out of the answer


def test_list_offsets_asks_earliest_and_latest_as_a_replica_and_raises_the_leaders_error() -> None:
    seen: list[tuple[int, Any]] = []

    def handler(key: ApiKey, version: int, body: Any) -> Any:
        seen.append((version, body))
        R = ListOffsetsResponse
        wanted = body.topics[0].partitions[0]
        error = ErrorCode.FENCED_LEADER_EPOCH if wanted.current_leader_epoch == 1 else ErrorCode.NONE
        return R(throttle_time_ms=0, topics=[R.ListOffsetsTopicResponse(name="t", partitions=[
            R.ListOffsetsPartitionResponse(partition_index=0, error_code=error, timestamp=-1,
                                           offset=100 if wanted.timestamp == -1 else 7, leader_epoch=5),
        ])])

    broker = FakeBroker(handler)
    try:
        async def scenario() -> tuple[int, int]:
            leader = endpoint_to(broker)
            try:
                found = await leader.fetch_earliest_offset(T0, 5), await leader.fetch_latest_offset(T0, 5)
                with pytest.raises(KafkaError) as fenced:
                    await leader.fetch_latest_offset(T0, 1)
                assert fenced.value.code is ErrorCode.FENCED_LEADER_EPOCH
                return found
            finally:
                leader.close()

        assert asyncio.run(scenario()) == (7, 100)
    finally:
        broker.stop()
    assert [version for version, _ in seen] == [5, 5, 5]
    assert all(body.replica_id == 7 and body.isolation_level == 0 for _, body in seen)
    assert [body.topics[0].partitions[0].timestamp for _, body in seen] == [-2, -1, -1]


@pytest.mark.parametrize("reply", [CLOSE, SILENT], ids=["closed", "silent"])
def test_a_leader_that_closes_or_does_not_answer_is_unreachable_and_the_next_call_reconnects(reply: object) -> None:
    calls = []

    def handler(key: ApiKey, version: int, body: Any) -> Any:
        calls.append(key)
        return reply if len(calls) == 1 else fetch_answer(body)

    broker = FakeBroker(handler)
    try:
        async def scenario() -> None:
            leader = endpoint_to(broker)
            try:
                with pytest.raises(LeaderUnreachableError):
                    await leader.fetch({T0: FetchPosition(0, 1, 0)})
                assert not leader.connected
                answers = await leader.fetch({T0: FetchPosition(0, 1, 0)})
                assert bytes(answers[T0].records) == BATCH
            finally:
                leader.close()

        asyncio.run(scenario())
    finally:
        broker.stop()


def test_a_refused_connection_is_unreachable() -> None:
    broker = FakeBroker()
    port = broker.port
    broker.stop()

    async def scenario() -> None:
        leader = RemoteLeaderEndpoint(BrokerEndpoint(1, "127.0.0.1", port), node_id=7, client_id="c",
                                      settings=SETTINGS)
        with pytest.raises(LeaderUnreachableError):
            await leader.fetch_epoch_end_offsets({T0: (1, 1)})

    asyncio.run(scenario())


def test_fetches_after_the_first_are_incremental_and_a_session_error_starts_a_full_one() -> None:
    seen: list[Any] = []
    answers = iter([("open", 77), ("quiet", 77), ("error", 0), ("open", 78)])

    def handler(key: ApiKey, version: int, body: Any) -> Any:
        seen.append(body)
        kind, session_id = next(answers)
        if kind == "error":
            return FetchResponse(throttle_time_ms=0, error_code=ErrorCode.FETCH_SESSION_ID_NOT_FOUND, session_id=0,
                                 responses=[])
        response = fetch_answer(body) if kind == "open" else fetch_answer(type(body)(topics=[]))
        response.session_id = session_id
        return response

    broker = FakeBroker(handler)
    try:
        async def scenario() -> list[dict]:
            leader = endpoint_to(broker)
            try:
                return [await leader.fetch(positions) for positions in (
                    {T0: FetchPosition(5, 3, 2), T1: FetchPosition(0, 3, 0)},
                    {T0: FetchPosition(6, 3, 2)},
                    {T0: FetchPosition(6, 3, 2)},
                    {T0: FetchPosition(6, 3, 2)},
                )]
            finally:
                leader.close()

        results = asyncio.run(scenario())
    finally:
        broker.stop()
    sessions = [(body.session_id, body.session_epoch) for body in seen]
    assert sessions == [(0, 0), (77, 1), (77, 2), (0, 0)]
    named = [[(t.topic, p.partition, p.fetch_offset) for t in body.topics for p in t.partitions] for body in seen]
    assert named[1] == [("t", 0, 6)] and named[2] == [] and named[3] == [("t", 0, 6)]
    assert [(t.topic, t.partitions) for t in seen[1].forgotten_topics_data] == [("t", [1])]
    assert results[1] == {} and results[2] == {}
    assert set(results[3]) == {T0}
