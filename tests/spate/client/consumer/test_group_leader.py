"""The group leader's part of a rebalance: assigning every member's partitions, and noticing topic changes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from spate.client.consumer.assignors import RangeAssignor
from spate.client.consumer.consumer_protocol import decode_assignment, encode_subscription
from spate.client.consumer.group_leader import GroupLeader
from spate.client.net.metadata import Metadata, snapshot_from_response
from spate.protocol import ErrorCode, KafkaError
from spate.protocol.messages.metadata import MetadataResponse as R
from spate.structs import TopicPartition


def snapshot(**partitions: int):
    return snapshot_from_response(R(
        brokers=[R.MetadataResponseBroker(node_id=1, host="h", port=1)],
        controller_id=1,
        topics=[R.MetadataResponseTopic(error_code=0, name=name, partitions=[
            R.MetadataResponsePartition(error_code=0, partition_index=p, leader_id=1, replica_nodes=[1], isr_nodes=[1])
            for p in range(count)
        ]) for name, count in partitions.items()],
    ))


class FakeNetwork:
    def __init__(self) -> None:
        self.metadata = Metadata(max_age=1e9, refresh_backoff=0.0, clock=lambda: 0.0)
        self.next_snapshot = snapshot(orders=3, refunds=1)
        self.asked: list[tuple[list[str], int | None]] = []

    def fetch_metadata(self, topics, *, deadline: float, node: int | None = None):
        self.asked.append((list(topics), node))
        self.metadata.update(self.next_snapshot, 0.0)
        return self.next_snapshot


def member(member_id: str, *topics: str, metadata: bytes | None = None) -> SimpleNamespace:
    return SimpleNamespace(member_id=member_id, metadata=metadata if metadata is not None else encode_subscription(topics))


def leader(network: FakeNetwork) -> GroupLeader:
    return GroupLeader(network, "g", (RangeAssignor(),), request_timeout=1.0, clock=lambda: 0.0)  # type: ignore[arg-type]


def test_the_leader_assigns_every_subscribed_topic_from_the_coordinators_metadata() -> None:
    network = FakeNetwork()
    group = leader(network)
    result = group.assign("range", [member("m1", "orders"), member("m2", "orders", "refunds"),
                                    member("m3", metadata=b"\xff")], 7, node=-5)
    assert network.asked == [(["orders", "refunds"], -5)]
    assigned = {a.member_id: decode_assignment(a.assignment) for a in result}
    assert assigned["m3"] == ()  # an unreadable subscription gets nothing
    assert sorted(assigned["m1"] + assigned["m2"]) == [TopicPartition("orders", p) for p in range(3)] + [
        TopicPartition("refunds", 0)
    ]
    assert group.assigned_counts == {"orders": 3, "refunds": 1}


def test_an_assignor_the_group_did_not_offer_is_refused() -> None:
    with pytest.raises(KafkaError) as raised:
        leader(FakeNetwork()).assign("sticky", [member("m1", "orders")], 1, node=None)
    assert raised.value.code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_the_leader_notices_a_topic_that_gains_partitions_once_per_metadata_change() -> None:
    network = FakeNetwork()
    group = leader(network)
    group.assign("range", [member("m1", "orders", "refunds")], 1, node=None)
    assert not group.topics_changed()
    network.metadata.update(snapshot(orders=3, refunds=1), 0.0)
    assert not group.topics_changed()
    network.metadata.update(snapshot(orders=4, refunds=1), 0.0)
    assert group.topics_changed()
    assert not group.topics_changed()  # the same metadata is not reported twice
    group.forget()
    network.metadata.update(snapshot(orders=5, refunds=1), 0.0)
    assert not group.topics_changed()
