"""``spate groups list|describe|reset-offsets|delete`` against a real broker, with confluent-kafka members."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer as ConfluentConsumer
from confluent_kafka import TopicPartition as ConfluentPartition

from spate.client import Admin, Producer, TopicPartition
from tests.spate.cli.conftest import ADMIN_TIMEOUT_MS, assert_one_line_failure, spate
from tests.spate.cli.output import lag_by_partition, partition_rows

pytestmark = pytest.mark.integration

SETTLE_S = 20.0


@pytest.fixture
def admin(bootstrap) -> Iterator[Admin]:
    with Admin(bootstrap, default_api_timeout_ms=ADMIN_TIMEOUT_MS) as client:
        yield client


def committed(admin, group: str) -> dict[int, int]:
    return {tp.partition: o.offset for tp, o in admin.list_group_offsets(group).items()}


def produce(bootstrap: str, topic: str, per_partition: dict[int, int], timestamp: int | None = None) -> None:
    with Producer(bootstrap) as producer:
        futures = [
            producer.send(topic, b"v", partition=p, timestamp=timestamp)
            for p, count in per_partition.items()
            for _ in range(count)
        ]
        for future in futures:
            future.result()


def group_member(bootstrap: str, group: str, topic: str, client_id: str) -> ConfluentConsumer:
    consumer = ConfluentConsumer({
        "bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
        "auto.offset.reset": "earliest", "enable.auto.commit": False, "session.timeout.ms": 6000,
    })
    consumer.subscribe([topic])
    return consumer


def consume(consumer: ConfluentConsumer, count: int) -> list:
    """Poll until ``count`` records have arrived."""
    records: list = []
    deadline = time.monotonic() + SETTLE_S
    while len(records) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out with {len(records)} of {count} records")
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            records.append(message)
    return records


def wait_for_assignment(consumer: ConfluentConsumer, partitions: int) -> None:
    deadline = time.monotonic() + SETTLE_S
    while len(consumer.assignment()) < partitions:
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the member's assignment")
        consumer.poll(0.1)


# --- describe and lag ---------------------------------------------------------------------------


def test_describe_reports_lag_per_partition_as_it_grows_and_falls_to_zero(bootstrap, topic, group, make_topic) -> None:
    make_topic(2)
    produce(bootstrap, topic, {0: 10, 1: 6})
    consumer = group_member(bootstrap, group, topic, client_id="lag-reader")
    try:
        wait_for_assignment(consumer, 2)
        consume(consumer, 16)
        consumer.commit(offsets=[ConfluentPartition(topic, 0, 4), ConfluentPartition(topic, 1, 2)], asynchronous=False)

        described = spate("groups", "describe", group, bootstrap=bootstrap)
        assert described.returncode == 0, described
        assert f"Group: {group}  State: Stable  Members: 1" in described.stdout
        table = partition_rows(described.stdout)
        assert table[(topic, 0)][:5] == [topic, "0", "4", "10", "6"]
        assert table[(topic, 1)][:5] == [topic, "1", "2", "6", "4"]
        member_id, client_id = table[(topic, 0)][5], table[(topic, 0)][-1]
        assert member_id.startswith("lag-reader-") and client_id == "lag-reader"

        # The producer keeps going while the consumer holds still: the lag grows by what was written.
        produce(bootstrap, topic, {0: 5, 1: 3})
        grown = spate("groups", "describe", group, bootstrap=bootstrap)
        assert lag_by_partition(grown.stdout, topic) == {0: 11, 1: 7}

        consume(consumer, 8)
        consumer.commit(asynchronous=False)
        caught_up = spate("groups", "describe", group, bootstrap=bootstrap)
        assert lag_by_partition(caught_up.stdout, topic) == {0: 0, 1: 0}
        assert partition_rows(caught_up.stdout)[(topic, 0)][2:4] == ["15", "15"]
    finally:
        consumer.close()


def test_describe_of_an_empty_group_shows_offsets_without_members(bootstrap, admin, topic, group, make_topic) -> None:
    make_topic(1)
    produce(bootstrap, topic, {0: 3})
    admin.alter_group_offsets(group, {TopicPartition(topic, 0): 1})
    described = spate("groups", "describe", group, bootstrap=bootstrap)
    assert described.returncode == 0, described
    assert "State: Empty  Members: 0" in described.stdout
    assert partition_rows(described.stdout)[(topic, 0)] == [topic, "0", "1", "3", "2", "-", "-", "-"]


def test_list_shows_every_group(bootstrap, admin, topic, group, make_topic) -> None:
    make_topic(1)
    admin.alter_group_offsets(group, {TopicPartition(topic, 0): 0})
    listed = spate("groups", "list", bootstrap=bootstrap)
    assert listed.returncode == 0, listed
    assert group in listed.stdout.splitlines()


# --- reset-offsets ------------------------------------------------------------------------------


@pytest.fixture
def parked_group(bootstrap, admin, topic, group, make_topic):
    """A group with no members, committed at 5 on both partitions of a topic holding offsets [3, 10) and [0, 10).

    Partition 0's records carry timestamp 1_000 for offsets 0-4 and 2_000 for 5-9.
    """
    make_topic(2)
    produce(bootstrap, topic, {0: 5}, timestamp=1_000)
    produce(bootstrap, topic, {0: 5}, timestamp=2_000)
    produce(bootstrap, topic, {1: 10})
    admin.delete_records({TopicPartition(topic, 0): 3})
    admin.alter_group_offsets(group, {TopicPartition(topic, 0): 5, TopicPartition(topic, 1): 5})
    return topic, group


def test_reset_dry_run_prints_the_plan_and_changes_nothing(bootstrap, admin, parked_group) -> None:
    topic, group = parked_group
    result = spate("groups", "reset-offsets", group, "--topic", topic, "--to-earliest", bootstrap=bootstrap)
    assert result.returncode == 0, result
    assert partition_rows(result.stdout)[(topic, 0)] == [topic, "0", "5", "3"]
    assert partition_rows(result.stdout)[(topic, 1)] == [topic, "1", "5", "0"]
    assert "Dry run" in result.stdout
    assert committed(admin, group) == {0: 5, 1: 5}


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (["--to-earliest"], {0: 3, 1: 0}),
        (["--to-latest"], {0: 10, 1: 10}),
        (["--to-offset", "7"], {0: 7, 1: 7}),
        (["--to-offset", "1"], {0: 3, 1: 1}),  # kept within the log: partition 0 starts at 3
        (["--to-offset", "99"], {0: 10, 1: 10}),
        (["--shift-by", "-4"], {0: 3, 1: 1}),
        (["--shift-by", "3"], {0: 8, 1: 8}),
        (["--to-datetime", "1970-01-01T00:00:01.500+00:00"], {0: 5, 1: 0}),
        (["--to-datetime", "2999-01-01T00:00:00Z"], {0: 10, 1: 10}),  # nothing that late: the log end
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else None,
)
def test_reset_execute_commits_the_new_offsets(bootstrap, admin, parked_group, mode, expected) -> None:
    topic, group = parked_group
    result = spate("groups", "reset-offsets", group, "--topic", topic, *mode, "--execute", bootstrap=bootstrap)
    assert result.returncode == 0, result
    assert committed(admin, group) == expected


def test_reset_of_chosen_partitions_leaves_the_others_alone(bootstrap, admin, parked_group) -> None:
    topic, group = parked_group
    result = spate("groups", "reset-offsets", group, "--topic", f"{topic}:1", "--to-latest", "--execute",
                   bootstrap=bootstrap)
    assert result.returncode == 0, result
    assert committed(admin, group) == {0: 5, 1: 10}


# --- delete -------------------------------------------------------------------------------------


def test_delete_removes_an_empty_group_and_its_offsets(bootstrap, admin, parked_group) -> None:
    _, group = parked_group
    result = spate("groups", "delete", group, bootstrap=bootstrap)
    assert result.returncode == 0, result
    assert f"Deleted group {group}" in result.stdout
    assert group not in spate("groups", "list", bootstrap=bootstrap).stdout.splitlines()
    assert committed(admin, group) == {}


# --- bad input ----------------------------------------------------------------------------------


def test_an_active_group_is_neither_reset_nor_deleted(bootstrap, admin, topic, group, make_topic) -> None:
    make_topic(1)
    consumer = group_member(bootstrap, group, topic, client_id="busy")
    try:
        wait_for_assignment(consumer, 1)
        reset = spate("groups", "reset-offsets", group, "--topic", topic, "--to-earliest", "--execute",
                      bootstrap=bootstrap)
        assert_one_line_failure(reset, 1, f"group '{group}' is Stable with 1 member(s)", "stop its consumers")
        deleted = spate("groups", "delete", group, bootstrap=bootstrap)
        assert_one_line_failure(deleted, 1, f"group '{group}' has active members")
    finally:
        consumer.close()
    assert committed(admin, group) == {}


def test_an_unknown_group_is_reported_by_describe_and_delete(bootstrap, group) -> None:
    assert_one_line_failure(spate("groups", "describe", group, bootstrap=bootstrap), 1, f"group '{group}' does not exist")
    assert_one_line_failure(spate("groups", "delete", group, bootstrap=bootstrap), 1, f"group '{group}' does not exist")


def test_reset_names_an_unknown_topic_or_partition(bootstrap, parked_group) -> None:
    topic, group = parked_group
    unknown = spate("groups", "reset-offsets", group, "--topic", "no-such-topic", "--to-earliest", bootstrap=bootstrap)
    assert_one_line_failure(unknown, 1, "topic 'no-such-topic' does not exist")
    partition = spate("groups", "reset-offsets", group, "--topic", f"{topic}:7", "--to-earliest", bootstrap=bootstrap)
    assert_one_line_failure(partition, 1, f"topic '{topic}' has no partition 7")


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        (["--topic", "t", "--to-datetime", "yesterday"], "not an ISO 8601 date-time"),
        (["--topic", "t", "--to-offset", "-1"], "cannot be negative"),
        (["--topic", "t:x", "--to-latest"], "comma-separated integers"),
        (["--topic", "t"], "one of the arguments"),
        (["--topic", "t", "--to-earliest", "--to-latest"], "not allowed with"),
    ],
)
def test_bad_reset_arguments_are_usage_errors(bootstrap, arguments, fragment) -> None:
    result = spate("groups", "reset-offsets", "g", *arguments, bootstrap=bootstrap)
    assert_one_line_failure(result, 2, fragment)


def test_an_unreachable_broker_is_one_line(refused_address) -> None:
    result = spate("groups", "list", "--api-timeout-ms", "1500", bootstrap=refused_address)
    assert_one_line_failure(result, 1)
