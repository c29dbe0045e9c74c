"""Kafka's range and round-robin assignors, and the ConsumerProtocol subscription codec they read."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spate.client.consumer.assignors import (
    RangeAssignor,
    RoundRobinAssignor,
    resolve_assignors,
)
from spate.client.consumer.consumer_protocol import (
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from spate.protocol import types as t
from spate.protocol.errors import ProtocolDecodeError
from spate.structs import TopicPartition


def tps(topic: str, *numbers: int) -> list[TopicPartition]:
    return [TopicPartition(topic, n) for n in numbers]


def subs(**members: list[str]) -> dict[str, Subscription]:
    return {member: Subscription(tuple(sorted(topics))) for member, topics in members.items()}


def test_range_gives_each_member_consecutive_partitions_with_the_remainder_to_the_first_members() -> None:
    result = RangeAssignor().assign({"t": 5}, subs(b=["t"], a=["t"], c=["t"]))
    assert result == {"a": tps("t", 0, 1), "b": tps("t", 2, 3), "c": tps("t", 4)}


def test_range_assigns_topic_by_topic_so_co_partitioned_topics_land_together() -> None:
    result = RangeAssignor().assign({"x": 2, "y": 2}, subs(m1=["x", "y"], m2=["x", "y"]))
    assert result == {"m1": tps("x", 0) + tps("y", 0), "m2": tps("x", 1) + tps("y", 1)}


def test_roundrobin_deals_sorted_partitions_in_turn_skipping_members_not_subscribed() -> None:
    result = RoundRobinAssignor().assign({"x": 3, "y": 2}, subs(a=["x", "y"], b=["y"]))
    assert result == {"a": tps("x", 0, 1, 2) + tps("y", 1), "b": tps("y", 0)}


def test_topics_that_do_not_exist_are_not_assigned_but_every_member_gets_an_entry() -> None:
    for assignor in (RangeAssignor(), RoundRobinAssignor()):
        assert assignor.assign({}, subs(a=["missing"], b=[])) == {"a": [], "b": []}


@settings(max_examples=100, deadline=None)
@given(
    counts=st.dictionaries(st.sampled_from("pqrs"), st.integers(1, 12), min_size=1),
    members=st.dictionaries(st.text("abcdef", min_size=1, max_size=4), st.sets(st.sampled_from("pqrs")), min_size=1,
                            max_size=6),
)
def test_every_subscribed_partition_goes_to_exactly_one_subscriber(counts, members) -> None:
    subscriptions = {m: Subscription(tuple(sorted(topics))) for m, topics in members.items()}
    wanted = {TopicPartition(topic, p) for topics in members.values() for topic in topics if topic in counts
              for p in range(counts[topic])}
    for assignor in (RangeAssignor(), RoundRobinAssignor()):
        result = assignor.assign(counts, subscriptions)
        given_out = [tp for tps_ in result.values() for tp in tps_]
        assert sorted(given_out) == sorted(wanted)
        for member, assigned in result.items():
            assert {tp.topic for tp in assigned} <= set(members[member])


def test_strategies_resolve_from_names_in_preference_order_and_reject_unknown_ones() -> None:
    assert [a.name for a in resolve_assignors("roundrobin,range")] == ["roundrobin", "range"]
    assert [a.name for a in resolve_assignors(("range",))] == ["range"]
    with pytest.raises(ValueError):
        resolve_assignors("sticky")
    with pytest.raises(ValueError):
        resolve_assignors(["range", "range"])


def test_a_subscription_round_trips_and_later_versions_are_read_by_their_version_0_fields() -> None:
    assert decode_subscription(encode_subscription(["b", "a"], b"ud")) == Subscription(("a", "b"), b"ud")
    # A version 1 subscription appends owned partitions after the user data.
    v1 = bytearray()
    t.INT16.encode(v1, 1)
    t.array_codec(t.STRING).encode(v1, ["orders"])
    t.NULLABLE_BYTES.encode(v1, None)
    t.INT32.encode(v1, 0)
    assert decode_subscription(bytes(v1)).topics == ("orders",)
    with pytest.raises(ProtocolDecodeError):
        decode_subscription(b"\x00")


def test_an_assignment_round_trips_sorted() -> None:
    partitions = tps("b", 1, 0) + tps("a", 2)
    assert decode_assignment(encode_assignment(partitions)) == tuple(sorted(partitions))
    assert decode_assignment(b"") == ()
