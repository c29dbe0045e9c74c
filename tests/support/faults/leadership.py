"""Who leads what, as ZooKeeper records it, and the bounded waits the fault tests time with it.

The partition state znodes are the cluster's truth (the controller and the
leaders write them): a partition's leader, leader epoch and ISR. The fault
tests read them through the harness's own ZooKeeper session, which keeps
working whatever is done to the brokers' links. Times are measured with
``time.monotonic()`` from an instant the caller gives (the fault).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Callable

from kazoo.exceptions import NoNodeError

from broker_core.cluster.zk.znodes.topics import TopicPartitionStateZNode, TopicZNode
from tests.support.cluster import ClusterForTests
from tests.support.faults.cluster import FaultCluster
from tests.support.faults.replica_logs import ReplicaDifference

POLL_S = 0.05
NO_LEADER = -1


@dataclass(frozen=True)
class PartitionState:
    topic: str
    partition: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]

    @property
    def in_sync(self) -> bool:
        """Every replica is in the ISR."""
        return set(self.isr) == set(self.replicas)

    def __str__(self) -> str:
        return (f"{self.topic}-{self.partition}: leader {self.leader} (epoch {self.leader_epoch}), "
                f"isr {list(self.isr)}, replicas {list(self.replicas)}")


def partition_states(cluster: ClusterForTests, topic: str) -> list[PartitionState]:
    """Every partition of ``topic``, in partition order; a partition without a state yet has no leader."""
    data, _ = cluster.zk.get(TopicZNode.path(topic))
    assignment = TopicZNode.decode(topic, data)
    states = []
    for partition, replicas in sorted(assignment.partitions.items()):
        try:
            raw, _ = cluster.zk.get(TopicPartitionStateZNode.path(topic, partition))
        except NoNodeError:
            states.append(PartitionState(topic, partition, NO_LEADER, -1, (), tuple(replicas)))
            continue
        state = TopicPartitionStateZNode.decode(topic, partition, raw)
        states.append(PartitionState(topic, partition, state.leader, state.leader_epoch, state.isr,
                                     tuple(replicas)))
    return states


def partition_state(cluster: ClusterForTests, topic: str, partition: int) -> PartitionState:
    return partition_states(cluster, topic)[partition]


def led_by(cluster: ClusterForTests, topics: Iterable[str], broker_id: int) -> list[PartitionState]:
    """The partitions of ``topics`` whose recorded leader is ``broker_id``."""
    return [state for topic in topics for state in partition_states(cluster, topic) if state.leader == broker_id]


def wait_for_new_leaders(cluster: ClusterForTests, partitions: Sequence[PartitionState], since: float,
                         timeout: float = 60.0) -> float:
    """Until each of ``partitions`` has a registered leader with a newer epoch than in its given state;
    returns the seconds from ``since`` (the fault) to the moment the last of them had one."""

    def elected() -> bool:
        registered = set(cluster.registered_ids())
        for old in partitions:
            now = partition_state(cluster, old.topic, old.partition)
            if now.leader not in registered or now.leader_epoch <= old.leader_epoch:
                return False
        return True

    _poll(elected, f"new leaders for {[str(p) for p in partitions]}", timeout)
    return time.monotonic() - since


def wait_until_in_sync(cluster: ClusterForTests, topics: Sequence[str], since: float | None = None,
                       timeout: float = 90.0) -> float:
    """Until every partition of ``topics`` has every replica in its ISR and a registered leader, and every
    live broker's metadata shows a live leader for each; returns the seconds from ``since`` (default: now)."""
    start = time.monotonic() if since is None else since

    def in_sync() -> bool:
        registered = set(cluster.registered_ids())
        return all(state.in_sync and state.leader in registered
                   for topic in topics for state in partition_states(cluster, topic))

    def describe() -> str:
        return "every replica in the ISR: " + "; ".join(
            str(state) for topic in topics for state in partition_states(cluster, topic) if not state.in_sync)

    _poll(in_sync, describe, timeout)
    cluster.wait_for_metadata(topics, timeout=timeout)
    return time.monotonic() - start


def wait_for_identical_replicas(cluster: FaultCluster, topics: Sequence[str], timeout: float = 60.0) -> None:
    """Until, for every partition of ``topics``, all its replicas hold the same batches below the high
    watermark (a follower may still be fetching the last ones); AssertionError with the differences."""
    last: dict[str, list[ReplicaDifference]] = {}

    def identical() -> bool:
        last.clear()
        for topic in topics:
            for state in partition_states(cluster, topic):
                try:
                    differences = cluster.replica_differences(topic, state.partition)
                except AssertionError as exc:  # the leader could not say its high watermark (yet)
                    differences = [ReplicaDifference(-1, "no high watermark", str(exc))]
                if differences:
                    last[f"{topic}-{state.partition}"] = differences
        return not last

    try:
        cluster.wait_for(identical, "identical replicas", timeout)
    except AssertionError:
        shown = {name: [str(d) for d in differences[:5]] for name, differences in last.items()}
        raise AssertionError(f"replicas still differ below the high watermark after {timeout:g}s: {shown}") from None


def _poll(predicate: Callable[[], bool], what: str | Callable[[], str],
          timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what() if callable(what) else what}")
        time.sleep(POLL_S)
