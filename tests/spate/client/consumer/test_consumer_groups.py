"""Consumer groups with Spate's consumer against a real Spate broker, and alongside confluent-kafka members.

Members share a topic's partitions and rebalance as members come and go;
committed offsets round-trip and are where a member starts; an assign-only
consumer with a group id commits outside the membership; pattern
subscriptions follow topics as they appear; ``spate consume --group``
commits what it printed.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka import Consumer as ConfluentConsumer

from spate.client import (
    Admin,
    CommitFailedError,
    Consumer,
    NewTopic,
    OffsetAndMetadata,
    Producer,
    TopicPartition,
)
from tests.spate.cli.conftest import spate
from tests.spate.client.group_brokers import (
    TIMEOUT_S,
    poll_until,
    start_broker,
    unique_names,
)
from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

FAST_GROUP = {
    "session_timeout_ms": 6_000,
    "heartbeat_interval_ms": 300,
    "auto_offset_reset": "earliest",
    "default_api_timeout_ms": int(TIMEOUT_S * 1000),
}


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    yield from start_broker(tmp_path_factory, "groups-client")


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> Callable[[str], str]:
    return unique_names(request)


def topic_with_records(bootstrap: str, name: str, partitions: int, per_partition: int, prefix: str = "r") -> str:
    with Admin(bootstrap) as admin:
        admin.create_topics([NewTopic(name, partitions, 1)])
    produce(bootstrap, name, partitions, per_partition, prefix)
    return name


def produce(bootstrap: str, topic: str, partitions: int, per_partition: int, prefix: str) -> None:
    with Producer(bootstrap, linger_ms=1) as producer:
        for p in range(partitions):
            for i in range(per_partition):
                producer.send(topic, f"{prefix}-{p}-{i}".encode(), partition=p)
        producer.flush()


def everything(topic: str, partitions: int) -> set[TopicPartition]:
    return {TopicPartition(topic, p) for p in range(partitions)}


def test_two_members_share_four_partitions_and_the_survivor_takes_all_when_one_leaves(
    broker: BrokerProcess, unique
) -> None:
    topic = topic_with_records(broker.bootstrap, unique("t"), 4, 10)
    group = unique("group")
    events: list[tuple[str, str, frozenset[TopicPartition]]] = []

    def member(name: str) -> Consumer:
        consumer = Consumer(broker.bootstrap, group_id=group, client_id=name, enable_auto_commit=False, **FAST_GROUP)
        consumer.subscribe(
            [topic],
            on_assign=lambda tps: events.append((name, "assign", frozenset(tps))),
            on_revoke=lambda tps: (events.append((name, "revoke", frozenset(tps))), consumer.commit()),
        )
        return consumer

    first, second = member("first"), member("second")
    try:
        records: list = []
        deadline = time.monotonic() + TIMEOUT_S
        while len({(r.partition, r.offset) for r in records}) < 40 or len(first.assignment()) != 2 or len(
            second.assignment()
        ) != 2:
            if time.monotonic() > deadline:
                raise TimeoutError(f"read {len(records)}; assigned {first.assignment()} and {second.assignment()}")
            records += first.poll(timeout_ms=50) + second.poll(timeout_ms=50)
        assert {(r.partition, r.offset) for r in records} == {(p, o) for p in range(4) for o in range(10)}
        assert first.assignment() | second.assignment() == everything(topic, 4)
        assert not first.assignment() & second.assignment()
        first.commit()
        second.commit()

        second.close()  # leaves the group: the first member rebalances onto every partition
        poll_until([first], lambda: first.assignment() == everything(topic, 4))
        assert events[-2] == ("first", "revoke", frozenset(events[-2][2])) and len(events[-2][2]) == 2
        assert events[-1] == ("first", "assign", frozenset(everything(topic, 4)))
        produce(broker.bootstrap, topic, 4, 2, "late")
        late = poll_until_count(first, 8)
        # Committed positions carry over: only the new records come, none is read twice.
        assert sorted(r.value for r in late) == sorted(f"late-{p}-{i}".encode() for p in range(4) for i in range(2))
    finally:
        first.close()
        second.close()


def test_commit_and_committed_round_trip_and_a_new_member_starts_at_the_committed_offsets(
    broker: BrokerProcess, unique
) -> None:
    topic = topic_with_records(broker.bootstrap, unique("t"), 2, 10)
    group = unique("group")
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    with Consumer(broker.bootstrap, group_id=group, enable_auto_commit=False, **FAST_GROUP) as consumer:
        consumer.subscribe([topic])
        poll_until([consumer], lambda: consumer.assignment() == {tp0, tp1})
        assert consumer.committed([tp0, tp1]) == {tp0: None, tp1: None}
        consumer.commit({tp0: 4, tp1: OffsetAndMetadata(7, "checkpoint")})
        committed = consumer.committed([tp0, tp1])
        assert (committed[tp0].offset, committed[tp1].offset, committed[tp1].metadata) == (4, 7, "checkpoint")
        future = consumer.commit({tp0: 5}, asynchronous=True)
        poll_until([consumer], future.done)
        assert future.exception() is None and consumer.committed([tp0])[tp0].offset == 5
        assert consumer.group_metadata().generation_id >= 1 and consumer.group_metadata().member_id
    with Consumer(broker.bootstrap, group_id=group, enable_auto_commit=False, **FAST_GROUP) as successor:
        successor.subscribe([topic])
        records = poll_until_count(successor, 8)
        assert sorted((r.partition, r.offset) for r in records) == [(0, o) for o in range(5, 10)] + [
            (1, o) for o in range(7, 10)
        ]


def test_auto_commit_on_close_lets_the_next_member_resume_where_the_last_stopped(broker: BrokerProcess, unique) -> None:
    topic = topic_with_records(broker.bootstrap, unique("t"), 1, 20)
    group = unique("group")
    tp = TopicPartition(topic, 0)
    with Consumer(broker.bootstrap, group_id=group, **FAST_GROUP) as consumer:
        consumer.subscribe([topic])
        read: list = []
        deadline = time.monotonic() + TIMEOUT_S
        while not read and time.monotonic() < deadline:
            read = consumer.poll(timeout_ms=100, max_records=5)
        assert [r.offset for r in read] == [0, 1, 2, 3, 4]
        position = consumer.position(tp)
    with Consumer(broker.bootstrap, group_id=group, enable_auto_commit=False, **FAST_GROUP) as successor:
        assert position == 5 and successor.committed([tp])[tp].offset == 5


def test_an_assign_only_consumer_with_a_group_id_commits_and_starts_at_committed_offsets(
    broker: BrokerProcess, unique
) -> None:
    topic = topic_with_records(broker.bootstrap, unique("t"), 1, 10)
    group = unique("group")
    tp = TopicPartition(topic, 0)
    with Consumer(broker.bootstrap, group_id=group, enable_auto_commit=False, **FAST_GROUP) as consumer:
        consumer.assign([tp])
        assert consumer.position(tp) == 0  # nothing committed: auto_offset_reset
        consumer.commit({tp: 6})
        assert consumer.group_metadata().generation_id == -1
    with Consumer(broker.bootstrap, group_id=group, enable_auto_commit=False, **FAST_GROUP) as again:
        again.assign([tp])
        assert again.position(tp) == 6
        assert [r.offset for r in poll_until_count(again, 4)] == [6, 7, 8, 9]


def poll_until_count(consumer: Consumer, count: int) -> list:
    records: list = []
    deadline = time.monotonic() + TIMEOUT_S
    while len(records) < count and time.monotonic() < deadline:
        records += consumer.poll(timeout_ms=100)
    return records


def test_a_commit_from_outside_a_group_with_members_fails_as_commit_failed(broker: BrokerProcess, unique) -> None:
    topic = topic_with_records(broker.bootstrap, unique("t"), 1, 1)
    group = unique("group")
    tp = TopicPartition(topic, 0)
    with Consumer(broker.bootstrap, group_id=group, **FAST_GROUP) as member, Consumer(
        broker.bootstrap, group_id=group, enable_auto_commit=False, **FAST_GROUP
    ) as outsider:
        member.subscribe([topic])
        poll_until([member], lambda: member.assignment() == {tp})
        outsider.assign([tp])
        with pytest.raises(CommitFailedError):
            outsider.commit({tp: 1})


def test_a_pattern_subscription_picks_up_a_matching_topic_created_later(broker: BrokerProcess, unique) -> None:
    prefix = unique("p")
    first = topic_with_records(broker.bootstrap, f"{prefix}-one", 1, 3)
    with Consumer(
        broker.bootstrap, group_id=unique("group"), metadata_max_age_ms=500, enable_auto_commit=False, **FAST_GROUP
    ) as consumer:
        consumer.subscribe(re.compile(re.escape(prefix) + r"-.*"))
        poll_until([consumer], lambda: consumer.assignment() == {TopicPartition(first, 0)})
        second = topic_with_records(broker.bootstrap, f"{prefix}-two", 2, 3)
        poll_until([consumer], lambda: consumer.assignment() == {TopicPartition(first, 0), *everything(second, 2)})
        assert consumer.subscription() == {first, second}


def test_a_confluent_kafka_member_and_a_spate_member_share_a_group(broker: BrokerProcess, unique) -> None:
    topic = topic_with_records(broker.bootstrap, unique("t"), 4, 10)
    group = unique("group")
    theirs = ConfluentConsumer({
        "bootstrap.servers": broker.bootstrap, "group.id": group, "auto.offset.reset": "earliest",
        "enable.auto.commit": False, "session.timeout.ms": 6000, "heartbeat.interval.ms": 300,
    })
    theirs.subscribe([topic])
    ours = Consumer(broker.bootstrap, group_id=group, enable_auto_commit=False, **FAST_GROUP)
    ours.subscribe([topic])
    seen: set[tuple[int, int]] = set()
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while len(seen) < 40 or len(ours.assignment()) != 2:
            if time.monotonic() > deadline:
                raise TimeoutError(f"read {len(seen)} records; our assignment: {ours.assignment()}")
            message = theirs.poll(0.05)
            if message is not None and not message.error():
                seen.add((message.partition(), message.offset()))
                theirs.commit(message=message, asynchronous=False)
            for record in ours.poll(timeout_ms=50):
                seen.add((record.partition, record.offset))
        ours.commit()
        theirs_assigned = {TopicPartition(tp.topic, tp.partition) for tp in theirs.assignment()}
        assert theirs_assigned | ours.assignment() == everything(topic, 4)
        assert not theirs_assigned & ours.assignment()
        assert seen == {(p, o) for p in range(4) for o in range(10)}
        with Admin(broker.bootstrap) as admin:
            committed = admin.list_group_offsets(group)
        assert {tp: c.offset for tp, c in committed.items()} == {tp: 10 for tp in everything(topic, 4)}
    finally:
        ours.close()
        theirs.close()


def test_spate_consume_with_a_group_commits_what_it_printed(broker: BrokerProcess, unique) -> None:
    topic = topic_with_records(broker.bootstrap, unique("t"), 2, 5)
    group = unique("group")
    result = spate("consume", topic, "--group", group, "--from-beginning", "--max-messages", "10",
                   "--timeout-ms", "15000", bootstrap=broker.bootstrap)
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.split()) == sorted(f"r-{p}-{i}" for p in range(2) for i in range(5))
    described = spate("groups", "describe", group, bootstrap=broker.bootstrap)
    assert described.returncode == 0, described.stderr
    assert group in described.stdout and topic in described.stdout
    with Admin(broker.bootstrap) as admin:
        committed = admin.list_group_offsets(group)
    assert {tp: c.offset for tp, c in committed.items()} == {tp: 5 for tp in everything(topic, 2)}
    again = spate("consume", topic, "--group", group, "--timeout-ms", "1500", bootstrap=broker.bootstrap)
    assert again.returncode == 0 and again.stdout == ""  # nothing left past the committed offsets


def test_heartbeats_keep_a_member_that_is_busy_between_polls_in_the_group(broker: BrokerProcess, unique) -> None:
    topic = topic_with_records(broker.bootstrap, unique("t"), 1, 1)
    group = unique("group")
    settings = {**FAST_GROUP, "session_timeout_ms": 1_500, "heartbeat_interval_ms": 200}
    with Consumer(broker.bootstrap, group_id=group, enable_auto_commit=False, **settings) as consumer:
        consumer.subscribe([topic])
        poll_until([consumer], lambda: consumer.assignment() == {TopicPartition(topic, 0)})
        generation = consumer.group_metadata().generation_id
        time.sleep(3.0)  # twice the session timeout without a poll
        consumer.poll(timeout_ms=200)
        assert consumer.group_metadata().generation_id == generation
        with Admin(broker.bootstrap) as admin:
            described = admin.describe_groups([group])[group]
        assert described.state == "Stable" and len(described.members) == 1


def test_a_member_that_stops_polling_past_max_poll_interval_leaves_and_rejoins_on_its_next_poll(
    broker: BrokerProcess, unique
) -> None:
    topic = topic_with_records(broker.bootstrap, unique("t"), 2, 1)
    group = unique("group")
    slow = Consumer(broker.bootstrap, group_id=group, enable_auto_commit=False, max_poll_interval_ms=1_500, **FAST_GROUP)
    steady = Consumer(broker.bootstrap, group_id=group, enable_auto_commit=False, **FAST_GROUP)
    try:
        slow.subscribe([topic])
        steady.subscribe([topic])
        poll_until([slow, steady], lambda: len(slow.assignment()) == 1 and len(steady.assignment()) == 1)
        # Only the steady member polls: the slow one's heartbeat thread gives up its place.
        poll_until([steady], lambda: steady.assignment() == everything(topic, 2), timeout=10)
        poll_until([slow, steady], lambda: len(slow.assignment()) == 1 and len(steady.assignment()) == 1)
    finally:
        slow.close()
        steady.close()
