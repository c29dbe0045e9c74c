"""Consumers with ``group.protocol=consumer`` (KIP-848) against a real broker.

* A group of consumers splits the partitions; the coordinator assigns them.
* A member joining or leaving moves only the partitions that must move: the
  others keep consuming what they keep (no stop-the-world rebalance).
* Offsets committed by members of a consumer group are resumed from.
* The group is listed with type ``consumer`` and described by ConsumerGroupDescribe.
* A non-empty consumer group refuses classic members, and the reverse.
* The group survives a broker crash: its records in __consumer_offsets bring
  back members, epochs and assignments, so members carry on without rejoining.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient

from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest
from spate.protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest
from spate.protocol.messages.join_group import JoinGroupRequest
from spate.protocol.messages.offset_commit import OffsetCommitRequest
from tests.scenarios.groups.conftest import GROUP_BROKER_OVERRIDES
from tests.scenarios.groups.topics import create_topic, produce
from tests.support.admin_requests import find_group_coordinator
from tests.support.broker_process import BrokerProcess
from tests.support.broker_under_test import SPATE, BrokerFactory
from tests.support.raw_client import RawClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]
PARTITIONS = 6

if tuple(int(x) for x in confluent_kafka.libversion()[0].split(".")[:2]) < (2, 10):
    pytest.skip("group.protocol=consumer needs librdkafka 2.10 or later", allow_module_level=True)


def consumer(bootstrap: str, group: str, **overrides: object) -> Consumer:
    return Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "group.protocol": "consumer",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "fetch.wait.max.ms": 100,
        **overrides,
    })


def assignments(consumers: list[Consumer]) -> list[set[int]]:
    return [{tp.partition for tp in c.assignment()} for c in consumers]


def poll_until(consumers: list[Consumer], done, timeout: float = 30.0, watch=None) -> list[set[int]]:
    """Poll every consumer until ``done(assignments)``; ``watch`` sees each assignment on the way."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for c in consumers:
            c.poll(0.05)
        current = assignments(consumers)
        if watch is not None:
            watch(current)
        if done(current):
            return current
    raise AssertionError(f"not settled in {timeout}s: {assignments(consumers)}")


def split_all(current: list[set[int]]) -> bool:
    together = [p for ps in current for p in ps]
    return all(current) and sorted(together) == list(range(PARTITIONS))


@pytest.fixture
def topic(broker: BrokerProcess, request: pytest.FixtureRequest) -> str:
    name = f"kip848-{request.node.name[:40]}"
    create_topic(broker.bootstrap, name, PARTITIONS)
    produce(broker.bootstrap, name, 5, PARTITIONS)
    return name


@pytest.fixture
def closing() -> Iterator[list[Consumer]]:
    made: list[Consumer] = []
    yield made
    for c in made:
        c.close()


def test_a_group_of_consumers_splits_the_partitions(broker, topic, closing) -> None:
    closing.extend(consumer(broker.bootstrap, "split") for _ in range(3))
    for c in closing:
        c.subscribe([topic])
    # Incremental reconciliation passes through uneven splits (a revoked
    # partition reaches the newcomer before the others settle); the target is even.
    settled = poll_until(closing, lambda a: split_all(a) and sorted(map(len, a)) == [2, 2, 2])
    assert sorted(p for ps in settled for p in ps) == list(range(PARTITIONS))


def test_joining_and_leaving_move_only_the_partitions_that_must_move(broker, topic, closing) -> None:
    first = consumer(broker.bootstrap, "incremental")
    closing.append(first)
    first.subscribe([topic])
    poll_until(closing, lambda a: a[0] == set(range(PARTITIONS)))
    second = consumer(broker.bootstrap, "incremental")
    closing.append(second)
    second.subscribe([topic])
    seen_by_first: list[set[int]] = []
    settled = poll_until(closing, split_all, watch=lambda a: seen_by_first.append(a[0]))
    # The first member never lost all of its partitions: it only gave up the half the second one took.
    assert all(seen_by_first) and settled[0] | settled[1] == set(range(PARTITIONS))
    closing.remove(second)
    second.close()  # leaves with member epoch -1
    poll_until(closing, lambda a: a[0] == set(range(PARTITIONS)))


def test_committed_offsets_are_resumed_by_the_next_member(broker, topic, closing) -> None:
    c = consumer(broker.bootstrap, "commits")
    closing.append(c)
    c.subscribe([topic])
    records = []
    deadline = time.monotonic() + 30
    while len(records) < 5 * PARTITIONS and time.monotonic() < deadline:
        message = c.poll(0.1)
        if message is not None and message.error() is None:
            records.append(message)
    assert len(records) == 5 * PARTITIONS
    c.commit(asynchronous=False)  # OffsetCommit v9 with the member's epoch
    committed = c.committed([confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10)
    assert [tp.offset for tp in committed] == [5] * PARTITIONS
    closing.remove(c)
    c.close()
    again = consumer(broker.bootstrap, "commits")
    closing.append(again)
    again.subscribe([topic])
    poll_until(closing, lambda a: a[0] == set(range(PARTITIONS)))
    assert again.poll(1.0) is None  # nothing after the commit to read


def test_the_group_is_listed_as_a_consumer_group_and_described(broker, topic, closing) -> None:
    c = consumer(broker.bootstrap, "described")
    closing.append(c)
    c.subscribe([topic])
    poll_until(closing, lambda a: a[0] == set(range(PARTITIONS)))
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    listed = admin.list_consumer_groups().result(timeout=10)
    types = {g.group_id: g.type for g in listed.valid}
    assert types["described"] == confluent_kafka.ConsumerGroupType.CONSUMER
    described = admin.describe_consumer_groups(["described"])["described"].result(timeout=10)
    assert described.type == confluent_kafka.ConsumerGroupType.CONSUMER
    assert described.partition_assignor == "uniform"
    (member,) = described.members
    assert {tp.partition for tp in member.assignment.topic_partitions} == set(range(PARTITIONS))


def test_a_non_empty_group_refuses_members_of_the_other_protocol(broker, topic, closing) -> None:
    c = consumer(broker.bootstrap, "typed")
    closing.append(c)
    c.subscribe([topic])
    poll_until(closing, lambda a: a[0] == set(range(PARTITIONS)))
    with RawClient(broker.bootstrap) as raw:
        joined = raw.call(ApiKey.JOIN_GROUP, 5, JoinGroupRequest(
            group_id="typed", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
            protocol_type="consumer", protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range",
                                                                                           metadata=b"")]))
        assert joined.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        classic = raw.call(ApiKey.JOIN_GROUP, 5, JoinGroupRequest(
            group_id="classic-busy", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
            group_instance_id="static-1", protocol_type="consumer",
            protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")]))
        assert classic.error_code == ErrorCode.NONE  # a static member is in the group at once
        heartbeat = raw.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, ConsumerGroupHeartbeatRequest(
            group_id="classic-busy", member_id="new", member_epoch=0, rebalance_timeout_ms=10000,
            subscribed_topic_names=[topic]))
        assert heartbeat.error_code == ErrorCode.GROUP_ID_NOT_FOUND


def _heartbeat(raw: RawClient, member_id: str, epoch: int, topic: str | None = None, owned=None) -> Any:
    return raw.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, ConsumerGroupHeartbeatRequest(
        group_id="durable", member_id=member_id, member_epoch=epoch,
        rebalance_timeout_ms=10000 if epoch == 0 else -1,
        subscribed_topic_names=[topic] if topic else None, topic_partitions=owned))


def _commit(raw: RawClient, member_id: str, epoch: int) -> int:
    Q = OffsetCommitRequest
    answer = raw.call(ApiKey.OFFSET_COMMIT, 9, Q(
        group_id="durable", generation_id_or_member_epoch=epoch, member_id=member_id,
        topics=[Q.OffsetCommitRequestTopic(name="durable-topic", partitions=[
            Q.OffsetCommitRequestPartition(partition_index=0, committed_offset=1, committed_metadata="")])]))
    return answer.topics[0].partitions[0].error_code


def _retrying(call, timeout: float = 30.0) -> Any:
    """The call's answer once the restarted coordinator has loaded its partition (bounded)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            answer = call()
        except OSError:
            answer = None
        retriable = (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR,
                     ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if answer is not None and answer.error_code not in retriable:
            return answer
        if time.monotonic() > deadline:
            raise AssertionError(f"no answer in {timeout}s: {answer}")
        time.sleep(0.2)


def test_a_broker_crash_keeps_the_group(tmp_path) -> None:
    with BrokerFactory(SPATE, tmp_path) as start:
        broker = start(GROUP_BROKER_OVERRIDES)
        create_topic(broker.bootstrap, "durable-topic", 4)

        def first_join() -> Any:
            find_group_coordinator(broker.bootstrap, "durable")  # creates __consumer_offsets
            with RawClient(broker.bootstrap) as raw:
                return _heartbeat(raw, "member-a", 0, "durable-topic")

        a = _retrying(first_join)
        assert (a.error_code, a.member_epoch) == (0, 1)
        owned = a.assignment.topic_partitions
        with RawClient(broker.bootstrap) as raw:
            b = _heartbeat(raw, "member-b", 0, "durable-topic")
            assert b.member_epoch == 2 and b.assignment.topic_partitions == []  # waits for a to revoke
        broker.restart(clean=False)  # SIGKILL: the group must come back from the log

        def describe() -> Any:
            with RawClient(broker.bootstrap) as raw:
                return raw.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 0,
                                ConsumerGroupDescribeRequest(group_ids=["durable"])).groups[0]

        group = _retrying(describe)
        assert (group.group_epoch, group.assignment_epoch) == (2, 2)
        assert sorted(m.member_id for m in group.members) == ["member-a", "member-b"]
        with RawClient(broker.bootstrap) as raw:
            # A commit at an epoch behind the member's is stale; at its epoch it is stored.
            assert _commit(raw, "member-b", 1) == ErrorCode.STALE_MEMBER_EPOCH
            assert _commit(raw, "member-b", 2) == ErrorCode.NONE
            assert _commit(raw, "nobody", 2) == ErrorCode.UNKNOWN_MEMBER_ID
            # Member a carries on at its epoch: told to revoke half, then moved to epoch 2.
            a2 = _heartbeat(raw, "member-a", 1, owned=owned)
            assert a2.error_code == 0 and len(a2.assignment.topic_partitions[0].partitions) == 2
            a3 = _heartbeat(raw, "member-a", 1, owned=a2.assignment.topic_partitions)
            assert (a3.error_code, a3.member_epoch) == (0, 2)
            b2 = _heartbeat(raw, "member-b", 2, owned=[])
            assert b2.error_code == 0 and len(b2.assignment.topic_partitions[0].partitions) == 2


def test_consumers_carry_on_across_a_broker_restart_without_rejoining(tmp_path) -> None:
    with BrokerFactory(SPATE, tmp_path) as start:
        broker = start(GROUP_BROKER_OVERRIDES)
        create_topic(broker.bootstrap, "restart-topic", PARTITIONS)
        members = [consumer(broker.bootstrap, "restarted") for _ in range(2)]
        try:
            for c in members:
                c.subscribe(["restart-topic"])
            before = poll_until(members, split_all)

            def describe() -> Any:
                with RawClient(broker.bootstrap) as raw:
                    return raw.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 0,
                                    ConsumerGroupDescribeRequest(group_ids=["restarted"])).groups[0]

            described = _retrying(describe)
            broker.restart(clean=True)
            after = _retrying(describe)
            assert sorted(m.member_id for m in after.members) == sorted(m.member_id for m in described.members)
            assert after.group_epoch == described.group_epoch
            # The members heartbeat the new coordinator at their epochs: same partitions, no new epoch.
            poll_until(members, lambda a: a == before and all(
                m.member_epoch == described.group_epoch for m in describe().members), timeout=20)
            assert describe().group_epoch == described.group_epoch
        finally:
            for c in members:
                c.close()
