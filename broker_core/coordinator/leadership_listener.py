"""Coordinators follow the leadership of their internal topics' partitions (Kafka's onElection / onResignation).

The broker tells its leadership listeners, on the event loop's thread,
after it applied a LeaderAndIsr or StopReplica request, what became of each
partition. :class:`CoordinatorLeadershipListener` passes the news about
``__consumer_offsets`` to the group coordinator and about
``__transaction_state`` to the transaction coordinator, and ignores every
other topic:

* leader at epoch E: the coordinator loads the partition, with E as its
  coordinator epoch;
* follower at epoch E (another broker leads at E): it unloads the partition,
  unless it has already seen a newer epoch there;
* replica stopped (moved away or deleted): it unloads the partition.
"""

from __future__ import annotations

from typing import Protocol

from spate.protocol.internal_records.consumer_offsets import CONSUMER_OFFSETS_TOPIC
from spate.protocol.internal_records.transaction_log import TRANSACTION_STATE_TOPIC


class CoordinatorOfPartitions(Protocol):
    """What a coordinator exposes for the leadership of its topic's partitions."""

    def on_elected(self, partition: int, leader_epoch: int) -> None: ...

    def on_resigned(self, partition: int, leader_epoch: int | None) -> None: ...


class CoordinatorLeadershipListener:
    """A broker leadership listener that moves the coordinators with their partitions."""

    def __init__(self, *, groups: CoordinatorOfPartitions | None, transactions: CoordinatorOfPartitions | None) -> None:
        self._coordinators = {CONSUMER_OFFSETS_TOPIC: groups, TRANSACTION_STATE_TOPIC: transactions}

    def on_become_leader(self, topic: str, partition: int, leader_epoch: int) -> None:
        coordinator = self._coordinators.get(topic)
        if coordinator is not None:
            coordinator.on_elected(partition, leader_epoch)

    def on_become_follower(self, topic: str, partition: int, leader_epoch: int) -> None:
        coordinator = self._coordinators.get(topic)
        if coordinator is not None:
            coordinator.on_resigned(partition, leader_epoch)

    def on_stop_replica(self, topic: str, partition: int) -> None:
        coordinator = self._coordinators.get(topic)
        if coordinator is not None:
            coordinator.on_resigned(partition, None)
