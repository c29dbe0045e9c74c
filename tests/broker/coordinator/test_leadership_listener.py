"""The broker's leadership news reaches the coordinator of each internal topic, and only that one."""

from __future__ import annotations

from broker_core.coordinator.leadership_listener import CoordinatorLeadershipListener
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import Harness, MemoryOffsetsTopic
from tests.broker.coordinator.transaction.txn_harness import MemoryTxnTopic, TxnHarness

E = ErrorCode


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def on_elected(self, partition: int, leader_epoch: int) -> None:
        self.calls.append(("elected", partition, leader_epoch))

    def on_resigned(self, partition: int, leader_epoch: int | None) -> None:
        self.calls.append(("resigned", partition, leader_epoch))


def test_each_internal_topic_goes_to_its_coordinator_and_other_topics_are_ignored() -> None:
    groups, transactions = Recorder(), Recorder()
    listener = CoordinatorLeadershipListener(groups=groups, transactions=transactions)
    listener.on_become_leader("__consumer_offsets", 3, 7)
    listener.on_become_leader("__transaction_state", 1, 2)
    listener.on_become_follower("__consumer_offsets", 3, 8)
    listener.on_become_follower("__transaction_state", 1, 3)
    listener.on_stop_replica("__consumer_offsets", 4)
    listener.on_stop_replica("__transaction_state", 0)
    for news in (listener.on_become_leader, listener.on_become_follower):
        news("orders", 0, 1)
    listener.on_stop_replica("orders", 0)
    assert groups.calls == [("elected", 3, 7), ("resigned", 3, 8), ("resigned", 4, None)]
    assert transactions.calls == [("elected", 1, 2), ("resigned", 1, 3), ("resigned", 0, None)]


def test_a_missing_coordinator_is_skipped() -> None:
    listener = CoordinatorLeadershipListener(groups=None, transactions=None)
    listener.on_become_leader("__consumer_offsets", 0, 1)
    listener.on_stop_replica("__transaction_state", 0)


def test_the_real_coordinators_load_and_unload_through_the_listener() -> None:
    groups = Harness(topic=MemoryOffsetsTopic(partitions=4, led=set()), create_topic=False)
    transactions = TxnHarness(MemoryTxnTopic(partitions=3, led=set()), groups.scheduler)
    listener = CoordinatorLeadershipListener(groups=groups.coordinator, transactions=transactions.coordinator)
    group_partition = groups.coordinator.partition_for("g")
    txn_partition = transactions.coordinator.partition_for("txn-1")
    listener.on_become_leader("__consumer_offsets", group_partition, 1)
    listener.on_become_leader("__transaction_state", txn_partition, 1)
    groups.scheduler.advance(0)
    joined = groups.join_new()
    groups.scheduler.advance(0)
    assert joined.error is E.NONE
    transactions.init()
    listener.on_become_follower("__transaction_state", txn_partition, 2)
    listener.on_stop_replica("__consumer_offsets", group_partition)
    assert transactions.coordinator.describe("txn-1") is None
    assert groups.group() is None
