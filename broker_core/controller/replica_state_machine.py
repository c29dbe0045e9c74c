"""Moving replicas between states (Kafka's ZkReplicaStateMachine).

* ONLINE: the replica's broker is told the partition's current leadership
  (LeaderAndIsr), which starts it as leader or follower.
* OFFLINE: its broker is told to stop it (StopReplica without deletion, when
  the broker is alive) and it leaves the ISR; if it led the partition, the
  partition is left leaderless (the partition state machine elects anew). The
  last ISR member stays in the ISR, so that when it returns it can lead again
  without an unclean election.
* DELETION_STARTED: StopReplica with deletion; the broker's answer moves it on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from broker_core.cluster.zk.controller_election import Leadership
from broker_core.cluster.zk.controller_zk import ControllerMovedError, ControllerZk, StaleStateError
from broker_core.cluster.zk.znodes import LeaderIsrAndControllerEpoch
from broker_core.controller.context import NO_LEADER, ControllerContext, LeaderAndIsr, PartitionReplica
from broker_core.controller.request_batch import ControllerRequestBatch
from broker_core.controller.states import ReplicaState, check_replica_transition
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

# Rounds of reading a partition's state and writing it without a replica, when its leader keeps writing meanwhile.
MAX_ISR_REMOVAL_ATTEMPTS = 3


class ReplicaStateMachine:
    def __init__(
        self,
        context: ControllerContext,
        zk: ControllerZk,
        batch: ControllerRequestBatch,
        leadership: Callable[[], Leadership],
    ) -> None:
        self._context = context
        self._zk = zk
        self._batch = batch
        self._leadership = leadership

    def startup(self) -> None:
        """Replicas on live brokers become ONLINE (each broker hears all its partitions), the rest OFFLINE."""
        context = self._context
        online, offline = [], []
        for replica in context.replicas_for(context.all_partitions()):
            if context.is_deleting(replica.partition.topic):
                context.replica_states[replica] = ReplicaState.DELETION_INELIGIBLE
            elif context.is_replica_online(replica.broker_id, replica.partition):
                context.replica_states[replica] = ReplicaState.ONLINE
                online.append(replica)
            else:
                context.replica_states[replica] = ReplicaState.OFFLINE
                offline.append(replica)
        self.handle_state_changes(online, ReplicaState.ONLINE)

    def handle_state_changes(self, replicas: Iterable[PartitionReplica], target: ReplicaState) -> None:
        replicas = list(replicas)
        context = self._context
        for replica in replicas:
            check_replica_transition(
                f"{replica.partition} on broker {replica.broker_id}", context.replica_state(replica), target
            )
        if target is ReplicaState.ONLINE:
            self._online(replicas)
        elif target is ReplicaState.OFFLINE:
            self._offline(replicas)
        elif target is ReplicaState.DELETION_STARTED:
            for replica in replicas:
                self._batch.add_stop_replica(replica.broker_id, replica.partition, delete=True)
        if target is ReplicaState.NON_EXISTENT:
            for replica in replicas:
                context.replica_states.pop(replica, None)
        else:
            for replica in replicas:
                context.replica_states[replica] = target

    def _online(self, replicas: list[PartitionReplica]) -> None:
        context = self._context
        for replica in replicas:
            if context.replica_state(replica) is ReplicaState.NEW:
                continue  # a new partition's replicas heard of it when it got its first leader
            leadership = context.leadership.get(replica.partition)
            if leadership is not None and context.is_replica_online(replica.broker_id, replica.partition):
                self._batch.add_leader_and_isr([replica.broker_id], replica.partition, leadership)

    def _offline(self, replicas: list[PartitionReplica]) -> None:
        context = self._context
        for replica in replicas:
            if context.is_replica_online(replica.broker_id):
                leader_epoch = context.leadership[replica.partition].leader_epoch if (
                    replica.partition in context.leadership) else -1
                self._batch.add_stop_replica(replica.broker_id, replica.partition, delete=False,
                                             leader_epoch=leader_epoch)
        self.remove_from_isr([r for r in replicas if not context.is_deleting(r.partition.topic)])

    def remove_from_isr(self, replicas: Iterable[PartitionReplica]) -> None:
        """Take the replicas out of their partitions' ISR as it stands in ZooKeeper, bumping the leader epoch.

        The state is read from ZooKeeper, not from what the controller last
        heard: a leader may have written an ISR expansion whose notification
        is still on its way. A write that finds the state changed meanwhile
        (the leader wrote again) is retried on the newer state, at most
        :data:`MAX_ISR_REMOVAL_ATTEMPTS` times. The replicas taken out hear
        nothing more of the partition (Kafka leaves them out of the
        LeaderAndIsr): a broker that is shutting down must not follow again.
        """
        removed: dict[TopicPartition, set[int]] = {}
        for replica in replicas:
            removed.setdefault(replica.partition, set()).add(replica.broker_id)
        pending = list(removed)
        for _ in range(MAX_ISR_REMOVAL_ATTEMPTS):
            if not pending:
                return
            pending = self._remove_once({tp: removed[tp] for tp in pending})
        for tp in pending:
            logger.warning("controller: could not take %s out of the ISR of %s: its state kept changing",
                           sorted(removed[tp]), tp)

    def _remove_once(self, removed: dict[TopicPartition, set[int]]) -> list[TopicPartition]:
        """One read-and-write round; returns the partitions whose state changed since it was read."""
        context = self._context
        stored, malformed = self._zk.partition_states(removed)
        for bad in malformed:
            logger.error("controller: ignoring malformed znode %s: %s", bad.path, bad.reason)
        writes: dict[TopicPartition, tuple[LeaderIsrAndControllerEpoch, int]] = {}
        for tp, brokers in removed.items():
            found = stored.get(tp)
            if found is None:
                continue
            current = found.state
            if not (brokers & set(current.isr) or current.leader in brokers):
                continue
            leader = NO_LEADER if current.leader in brokers else current.leader
            remaining = tuple(b for b in current.isr if b not in brokers)
            isr = remaining or current.isr[-1:]
            writes[tp] = (LeaderIsrAndControllerEpoch(leader, current.leader_epoch + 1, isr, context.epoch),
                          found.zk_version)
        versions, errors = self._zk.write_partition_states(writes, self._leadership())
        for error in errors.values():
            if isinstance(error, ControllerMovedError):
                raise error
        for tp, error in errors.items():
            if not isinstance(error, StaleStateError):
                logger.warning("controller: could not take a stopped replica out of the ISR of %s: %s", tp, error)
        for tp, version in versions.items():
            state = writes[tp][0]
            leadership = LeaderAndIsr(state.leader, state.leader_epoch, state.isr, state.controller_epoch, version)
            context.leadership[tp] = leadership
            told = [r for r in context.replicas_of(tp) if r not in removed[tp] and context.is_replica_online(r, tp)]
            if leadership.leader != NO_LEADER:
                self._batch.add_leader_and_isr(told, tp, leadership)
            else:
                self._batch.add_update_metadata(context.live_or_shutting_down(), [tp])
        return [tp for tp, error in errors.items() if isinstance(error, StaleStateError)]
