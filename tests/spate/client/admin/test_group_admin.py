"""Admin's group methods against a real broker, with a confluent-kafka consumer as the group member."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer as ConfluentConsumer
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_core.server.embedded import EmbeddedBroker
from spate.client import (
    Admin,
    AdminError,
    ErrorCode,
    NewTopic,
    Producer,
    TopicPartition,
)
from spate.client.admin.group_admin import decode_assignment, encode_assignment
from spate.protocol.errors import ProtocolDecodeError
from spate.structs import OffsetAndMetadata

GROUP_OVERRIDES = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000"}
SETTLE_S = 20.0


# --- the assignment codec -----------------------------------------------------------------------

topic_partitions = st.builds(
    TopicPartition, st.text(alphabet="abcxyz._-", min_size=1, max_size=12), st.integers(0, 2**31 - 1)
)


@settings(max_examples=100, deadline=None)
@given(st.sets(topic_partitions, max_size=20), st.one_of(st.none(), st.binary(max_size=16)))
def test_an_encoded_assignment_decodes_to_its_sorted_partitions(partitions, user_data) -> None:
    assert decode_assignment(encode_assignment(partitions, user_data)) == tuple(sorted(partitions))


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=1, max_size=64))
def test_decoding_arbitrary_bytes_yields_partitions_or_a_decode_error_only(data) -> None:
    try:
        result = decode_assignment(data)
    except ProtocolDecodeError:
        return
    assert all(isinstance(tp, TopicPartition) for tp in result)


def test_an_empty_assignment_means_no_partitions_yet() -> None:
    assert decode_assignment(b"") == ()


# --- against a broker ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory) -> Iterator[str]:
    with EmbeddedBroker(tmp_path_factory.mktemp("groups"), GROUP_OVERRIDES) as broker:
        yield broker.bootstrap_servers


@pytest.fixture
def names() -> tuple[str, str, str]:
    suffix = uuid.uuid4().hex[:8]
    return f"topic-{suffix}", f"other-{suffix}", f"group-{suffix}"


@pytest.fixture
def admin(bootstrap) -> Iterator[Admin]:
    with Admin(bootstrap, default_api_timeout_ms=20_000) as client:
        yield client


def produce(bootstrap: str, topic: str, per_partition: dict[int, int]) -> None:
    with Producer(bootstrap) as producer:
        futures = [producer.send(topic, b"v", partition=p) for p, n in per_partition.items() for _ in range(n)]
        for future in futures:
            future.result()


def member(bootstrap: str, group: str, topic: str, client_id: str = "member-a") -> ConfluentConsumer:
    consumer = ConfluentConsumer({
        "bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
        "auto.offset.reset": "earliest", "enable.auto.commit": False, "session.timeout.ms": 6000,
    })
    consumer.subscribe([topic])
    return consumer


def poll_until(consumer: ConfluentConsumer, predicate, what: str) -> None:
    deadline = time.monotonic() + SETTLE_S
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        consumer.poll(0.1)


def consume(consumer: ConfluentConsumer, count: int) -> list:
    """Poll until ``count`` records have arrived (poll_until would drop them)."""
    records: list = []
    deadline = time.monotonic() + SETTLE_S
    while len(records) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out with {len(records)} of {count} records")
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            records.append(message)
    return records


def wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + SETTLE_S
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_an_active_group_is_listed_and_described_with_its_members_assignments(bootstrap, admin, names) -> None:
    topic, _, group = names
    admin.create_topics(NewTopic(topic, num_partitions=2))
    consumer = member(bootstrap, group, topic, client_id="describe-me")
    try:
        poll_until(consumer, lambda: len(consumer.assignment()) == 2, "the member to own both partitions")
        listing = {g.group_id: g for g in admin.list_groups()}
        assert listing[group].protocol_type == "consumer"
        assert not listing[group].is_simple_consumer_group

        description = admin.describe_groups([group])[group]
        assert description.state == "Stable"
        assert description.exists and not description.is_empty
        assert description.protocol_type == "consumer"
        assert description.protocol  # the chosen assignor
        assert description.coordinator is not None
        (only,) = description.members
        assert only.client_id == "describe-me"
        assert only.member_id.startswith("describe-me")
        assert only.assignment == (TopicPartition(topic, 0), TopicPartition(topic, 1))
    finally:
        consumer.close()


def test_committed_offsets_are_listed_and_uncommitted_partitions_left_out(bootstrap, admin, names) -> None:
    topic, _, group = names
    admin.create_topics(NewTopic(topic, num_partitions=2))
    produce(bootstrap, topic, {0: 3})
    consumer = member(bootstrap, group, topic)
    try:
        consume(consumer, 3)
        consumer.commit(asynchronous=False)
        committed = admin.list_group_offsets(group)
        assert list(committed) == [TopicPartition(topic, 0)]
        assert committed[TopicPartition(topic, 0)].offset == 3
        assert admin.list_group_offsets(group, [TopicPartition(topic, 1)]) == {}
    finally:
        consumer.close()


def test_offsets_of_a_group_with_members_cannot_be_altered_and_the_group_cannot_be_deleted(
    bootstrap, admin, names
) -> None:
    topic, _, group = names
    admin.create_topics(NewTopic(topic, num_partitions=1))
    consumer = member(bootstrap, group, topic)
    try:
        poll_until(consumer, lambda: len(consumer.assignment()) == 1, "the member to join")
        with pytest.raises(AdminError) as altered:
            admin.alter_group_offsets(group, {TopicPartition(topic, 0): 5})
        assert altered.value.code in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION,
                                      ErrorCode.REBALANCE_IN_PROGRESS)
        assert "only while it is empty" in str(altered.value)

        with pytest.raises(AdminError) as deleted:
            admin.delete_groups([group])
        assert deleted.value.code == ErrorCode.NON_EMPTY_GROUP
    finally:
        consumer.close()


def test_an_empty_group_takes_offsets_from_outside_loses_some_and_is_then_deleted(bootstrap, admin, names) -> None:
    topic, other, group = names
    admin.create_topics([NewTopic(topic, num_partitions=2), NewTopic(other, num_partitions=1)])
    consumer = member(bootstrap, group, topic)
    poll_until(consumer, lambda: len(consumer.assignment()) == 2, "the member to join")
    consumer.close()
    wait_for(lambda: admin.describe_groups(group)[group].state == "Empty", "the group to be empty")

    admin.alter_group_offsets(group, {TopicPartition(topic, 0): 4, TopicPartition(topic, 1): OffsetAndMetadata(7, "m"),
                                      TopicPartition(other, 0): 2})
    offsets = admin.list_group_offsets(group)
    assert {tp: o.offset for tp, o in offsets.items()} == {
        TopicPartition(topic, 0): 4, TopicPartition(topic, 1): 7, TopicPartition(other, 0): 2,
    }
    assert offsets[TopicPartition(topic, 1)].metadata == "m"

    admin.delete_group_offsets(group, [TopicPartition(other, 0)])
    assert set(admin.list_group_offsets(group)) == {TopicPartition(topic, 0), TopicPartition(topic, 1)}

    admin.delete_groups(group)
    assert group not in {g.group_id for g in admin.list_groups()}
    assert not admin.describe_groups(group)[group].exists
    assert admin.list_group_offsets(group) == {}


def test_a_group_nobody_knows_is_described_as_dead_and_cannot_be_deleted(admin, names) -> None:
    _, _, group = names
    description = admin.describe_groups(group)[group]
    assert description.state == "Dead" and not description.exists and description.members == ()
    with pytest.raises(AdminError) as deleted:
        admin.delete_groups([group])
    assert deleted.value.code == ErrorCode.GROUP_ID_NOT_FOUND
    assert "does not exist" in str(deleted.value)


def test_offsets_can_be_given_to_a_group_that_does_not_exist_yet(admin, names) -> None:
    topic, _, group = names
    admin.create_topics(NewTopic(topic, num_partitions=1))
    admin.alter_group_offsets(group, {TopicPartition(topic, 0): 11})
    assert admin.list_group_offsets(group)[TopicPartition(topic, 0)].offset == 11
    assert admin.describe_groups(group)[group].state == "Empty"


def test_a_negative_offset_is_rejected_before_anything_is_sent(admin, names) -> None:
    topic, _, group = names
    with pytest.raises(ValueError):
        admin.alter_group_offsets(group, {TopicPartition(topic, 0): -3})
