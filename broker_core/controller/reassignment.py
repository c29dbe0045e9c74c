"""Moving a partition's replicas to other brokers (Kafka's partition reassignment, KIP-455 style).

For a partition with original replicas ORS and target replicas TRS:

1. The assignment becomes RS = TRS + (ORS - TRS), with TRS - ORS adding and
   ORS - TRS removing (written to the topic's znode); every replica of RS
   hears LeaderAndIsr with a new leader epoch, so the new replicas start and
   follow the leader.
2. Once every target replica is in the ISR (checked on ISR changes and broker
   starts), the assignment becomes TRS: a new leader is elected from TRS if
   the current one is leaving or dead, removed replicas are stopped and
   deleted, the topic znode is rewritten and the partition leaves
   ``/admin/reassign_partitions``.

Taking a partition out of ``/admin/reassign_partitions`` before it completes
cancels it: the assignment goes back to ORS and the added replicas are deleted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from broker_core.cluster.zk.controller_election import Leadership
from broker_core.cluster.zk.controller_zk import ControllerZk
from broker_core.cluster.zk.znodes import LeaderIsrAndControllerEpoch, TopicAssignment
from broker_core.controller.context import ControllerContext, LeaderAndIsr, PartitionReplica
from broker_core.controller.partition_state_machine import ElectionStrategy, PartitionStateMachine
from broker_core.controller.replica_state_machine import ReplicaStateMachine
from broker_core.controller.request_batch import ControllerRequestBatch
from broker_core.controller.states import PartitionState, ReplicaState
from spate.protocol.errors import ErrorCode
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)


class ReassignmentManager:
    def __init__(
        self,
        context: ControllerContext,
        zk: ControllerZk,
        partitions: PartitionStateMachine,
        replicas: ReplicaStateMachine,
        batch: ControllerRequestBatch,
        leadership: Callable[[], Leadership],
    ) -> None:
        self._context = context
        self._zk = zk
        self._partitions = partitions
        self._replicas = replicas
        self._batch = batch
        self._leadership = leadership
        self._original: dict[TopicPartition, tuple[int, ...]] = {}

    def on_request(self, watch: Any) -> None:
        """Read ``/admin/reassign_partitions``: start new reassignments, cancel withdrawn ones."""
        context = self._context
        requested, version, malformed = self._zk.reassignment_request(watch=watch)
        if malformed is not None:
            logger.error("controller: ignoring malformed %s: %s", malformed.path, malformed.reason)
            self._zk.set_reassignment_request({}, version)
            return
        invalid = {tp: self._refusal(tp, target) for tp, target in requested.items()}
        invalid = {tp: reason for tp, reason in invalid.items() if reason is not None}
        for tp, reason in invalid.items():
            logger.error("controller: reassignment of %s to %s refused: %s", tp, list(requested[tp]), reason)
        for tp in [tp for tp in context.reassignments if tp not in requested]:
            self._cancel(tp)
        for tp, target in sorted(requested.items()):
            if tp in invalid or context.reassignments.get(tp) == target:
                continue
            self._start(tp, tuple(target))
        done = [tp for tp in requested if tp in invalid or tp not in context.reassignments]
        if done:
            self._remove_from_request(done)
        self.check(list(context.reassignments))

    def check_all(self) -> None:
        self.check(list(self._context.reassignments))

    def check(self, partitions: Iterable[TopicPartition]) -> None:
        """Finish every given reassignment whose target replicas are all in sync."""
        context = self._context
        finished = []
        for tp in partitions:
            target = context.reassignments.get(tp)
            leadership = context.leadership.get(tp)
            if target is None or leadership is None:
                continue
            if set(target) <= set(leadership.isr):
                self._complete(tp, target)
                finished.append(tp)
        if finished:
            self._remove_from_request(finished)

    def on_stop_replica_response(self, broker_id: int, errors: dict[TopicPartition, int]) -> None:
        context = self._context
        for tp, error in errors.items():
            replica = PartitionReplica(tp, broker_id)
            if context.replica_state(replica) is not ReplicaState.DELETION_STARTED or context.is_deleting(tp.topic):
                continue
            if error == ErrorCode.NONE:
                self._replicas.handle_state_changes([replica], ReplicaState.DELETION_SUCCESSFUL)
                self._replicas.handle_state_changes([replica], ReplicaState.NON_EXISTENT)
            else:
                self._replicas.handle_state_changes([replica], ReplicaState.DELETION_INELIGIBLE)

    # --- steps ---------------------------------------------------------------------------

    def _refusal(self, tp: TopicPartition, target: tuple[int, ...]) -> str | None:
        context = self._context
        if tp not in context.assignments:
            return "no such partition"
        if context.is_deleting(tp.topic):
            return "its topic is being deleted"
        if not target or len(set(target)) != len(target):
            return "target replicas must be non-empty and distinct"
        unknown = sorted(set(target) - set(context.live_brokers))
        if unknown:
            return f"broker(s) {unknown} are not alive"
        return None

    def _start(self, tp: TopicPartition, target: tuple[int, ...]) -> None:
        context = self._context
        original = self._original.get(tp, context.replicas_of(tp))
        if target == original:
            self._cancel(tp)
            return
        self._original[tp] = original
        context.reassignments[tp] = target
        combined = tuple(dict.fromkeys(target + original))
        context.assignments[tp] = combined
        self._write_assignment(tp.topic)
        adding = [PartitionReplica(tp, b) for b in target if b not in original]
        self._replicas.handle_state_changes(
            [r for r in adding if self._context.replica_state(r) is ReplicaState.NON_EXISTENT], ReplicaState.NEW
        )
        self._bump_leader_epoch(tp)
        logger.info("controller: reassigning %s from %s to %s", tp, list(original), list(target))

    def _complete(self, tp: TopicPartition, target: tuple[int, ...]) -> None:
        context = self._context
        original = self._original.pop(tp, context.replicas_of(tp))
        combined = context.replicas_of(tp)
        adding = [PartitionReplica(tp, b) for b in target if b not in original]
        self._replicas.handle_state_changes(
            [r for r in adding if context.replica_state(r) is ReplicaState.NEW], ReplicaState.ONLINE
        )
        context.assignments[tp] = target
        leadership = context.leadership[tp]
        if leadership.leader not in target or leadership.leader not in context.electable_brokers():
            self._partitions.handle_state_changes([tp], PartitionState.ONLINE, ElectionStrategy.REASSIGNMENT)
        else:
            self._bump_leader_epoch(tp)
        context.reassignments.pop(tp, None)
        self._remove_replicas(tp, [b for b in combined if b not in target])
        self._write_assignment(tp.topic)
        self._batch.add_update_metadata(context.live_or_shutting_down(), [tp])
        logger.info("controller: reassignment of %s to %s completed", tp, list(target))

    def _cancel(self, tp: TopicPartition) -> None:
        context = self._context
        original = self._original.pop(tp, None)
        target = context.reassignments.pop(tp, None)
        if original is None or target is None:
            return
        combined = context.replicas_of(tp)
        context.assignments[tp] = original
        leadership = context.leadership.get(tp)
        if leadership is not None and leadership.leader not in original:
            self._partitions.handle_state_changes([tp], PartitionState.ONLINE, ElectionStrategy.OFFLINE)
        self._remove_replicas(tp, [b for b in combined if b not in original])
        self._write_assignment(tp.topic)
        self._batch.add_update_metadata(context.live_or_shutting_down(), [tp])
        logger.info("controller: reassignment of %s cancelled; replicas back to %s", tp, list(original))

    def _remove_replicas(self, tp: TopicPartition, brokers: list[int]) -> None:
        context = self._context
        removed = [PartitionReplica(tp, b) for b in brokers]
        self._replicas.handle_state_changes(
            [r for r in removed if context.replica_state(r) is not ReplicaState.OFFLINE
             and context.replica_state(r) is not ReplicaState.NON_EXISTENT],
            ReplicaState.OFFLINE,
        )
        live = [r for r in removed if context.is_replica_online(r.broker_id)]
        self._replicas.handle_state_changes(
            [r for r in live if context.replica_state(r) is ReplicaState.OFFLINE], ReplicaState.DELETION_STARTED
        )
        for replica in removed:
            if not context.is_replica_online(replica.broker_id):
                context.replica_states.pop(replica, None)

    def _bump_leader_epoch(self, tp: TopicPartition) -> None:
        """Same leader, next epoch: every replica of the current assignment hears it."""
        context = self._context
        current = context.leadership.get(tp)
        if current is None:
            return
        new = current.elect(current.leader, current.isr, context.epoch)
        state = LeaderIsrAndControllerEpoch(new.leader, new.leader_epoch, new.isr, new.controller_epoch)
        versions, errors = self._zk.write_partition_states({tp: (state, current.zk_version)}, self._leadership())
        for error in errors.values():
            raise error
        leadership = LeaderAndIsr(new.leader, new.leader_epoch, new.isr, new.controller_epoch, versions[tp])
        context.leadership[tp] = leadership
        live = [b for b in context.replicas_of(tp) if context.is_replica_online(b, tp)]
        self._batch.add_leader_and_isr(live, tp, leadership)

    def _write_assignment(self, topic: str) -> None:
        """Rewrite the topic's znode from the context (replicas, adding and removing of each partition)."""
        context = self._context
        for _ in range(3):
            assignments, _malformed = self._zk.topic_assignments([topic])
            if topic not in assignments:
                return
            stored, version = assignments[topic]
            partitions = dict(stored.partitions)
            adding, removing = {}, {}
            for tp in context.partitions_of(topic):
                partitions[tp.partition] = context.replicas_of(tp)
                target = context.reassignments.get(tp)
                original = self._original.get(tp)
                if target is not None and original is not None:
                    adding[tp.partition] = tuple(b for b in target if b not in original)
                    removing[tp.partition] = tuple(b for b in original if b not in target)
            new = TopicAssignment(stored.topic_id, partitions, adding, removing)
            if self._zk.set_topic_assignment(topic, new, version, self._leadership()) is not None:
                return
        logger.error("controller: could not rewrite the assignment of %s (it kept changing)", topic)

    def _remove_from_request(self, partitions: list[TopicPartition]) -> None:
        for _ in range(3):
            requested, version, _ = self._zk.reassignment_request()
            remaining = {tp: r for tp, r in requested.items() if tp not in partitions}
            if remaining == requested or self._zk.set_reassignment_request(remaining, version):
                return
