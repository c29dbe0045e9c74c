"""Deleting topics (Kafka's TopicDeletionManager).

A topic named under ``/admin/delete_topics`` is queued. Every live broker
first hears, through UpdateMetadata, that its partitions are being deleted
(leader -2), so clients stop using them. Then each replica on a live broker
gets StopReplica with deletion; its broker's answer marks it deleted, or
ineligible when the broker failed to delete it. A replica on a dead broker is
ineligible until the broker comes back, when the deletion resumes. Once every
replica is deleted, the topic's znodes and its deletion marker go.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from broker_core.cluster.zk.controller_zk import ControllerZk
from broker_core.controller.context import ControllerContext, PartitionReplica
from broker_core.controller.partition_state_machine import PartitionStateMachine
from broker_core.controller.replica_state_machine import ReplicaStateMachine
from broker_core.controller.request_batch import ControllerRequestBatch
from broker_core.controller.states import PartitionState, ReplicaState
from spate.protocol.errors import ErrorCode
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

R = ReplicaState


class TopicDeletionManager:
    def __init__(
        self,
        context: ControllerContext,
        zk: ControllerZk,
        partitions: PartitionStateMachine,
        replicas: ReplicaStateMachine,
        batch: ControllerRequestBatch,
    ) -> None:
        self._context = context
        self._zk = zk
        self._partitions = partitions
        self._replicas = replicas
        self._batch = batch

    def enqueue(self, topics: Iterable[str]) -> None:
        context = self._context
        new = sorted(set(topics) - context.topics_to_delete)
        if not new:
            return
        context.topics_to_delete.update(new)
        partitions = [tp for topic in new for tp in context.partitions_of(topic)]
        logger.info("controller: deleting topic(s) %s", ", ".join(new))
        self._batch.add_update_metadata(context.live_or_shutting_down(), partitions)
        self._partitions.handle_state_changes(
            [tp for tp in partitions if context.partition_state(tp) is not PartitionState.OFFLINE],
            PartitionState.OFFLINE,
        )
        self.resume()

    def resume(self) -> None:
        """Push every queued topic as far as its brokers allow."""
        for topic in sorted(self._context.topics_to_delete):
            self._advance(topic)

    def on_stop_replica_response(self, broker_id: int, errors: dict[TopicPartition, int]) -> None:
        context = self._context
        deleted, failed = [], []
        for tp, error in errors.items():
            replica = PartitionReplica(tp, broker_id)
            if context.replica_state(replica) is not R.DELETION_STARTED:
                continue
            (deleted if error == ErrorCode.NONE else failed).append(replica)
        if failed:
            logger.warning("controller: broker %d failed to delete %d replica(s); retried when it restarts",
                           broker_id, len(failed))
            self._replicas.handle_state_changes(failed, R.DELETION_INELIGIBLE)
        self._replicas.handle_state_changes(deleted, R.DELETION_SUCCESSFUL)
        self.resume()

    def on_broker_startup(self, broker_id: int) -> None:
        """Replicas a returning broker still holds become eligible for deletion again."""
        context = self._context
        ineligible = [
            replica for replica, state in context.replica_states.items()
            if state is R.DELETION_INELIGIBLE and replica.broker_id == broker_id
        ]  # fmt: skip
        self._replicas.handle_state_changes(ineligible, R.OFFLINE)
        self.resume()

    def on_broker_failure(self, broker_id: int) -> None:
        context = self._context
        stuck = [
            replica for replica, state in context.replica_states.items()
            if replica.broker_id == broker_id and context.is_deleting(replica.partition.topic)
            and state in (R.DELETION_STARTED, R.OFFLINE)
        ]  # fmt: skip
        self._replicas.handle_state_changes(stuck, R.DELETION_INELIGIBLE)

    def _advance(self, topic: str) -> None:
        context = self._context
        replicas = context.replicas_for(context.partitions_of(topic))
        states = {replica: context.replica_state(replica) for replica in replicas}
        if all(state is R.DELETION_SUCCESSFUL for state in states.values()):
            self._complete(topic, replicas)
            return
        to_stop = [
            r for r, state in states.items()
            if state not in (R.DELETION_STARTED, R.DELETION_SUCCESSFUL, R.DELETION_INELIGIBLE, R.OFFLINE)
        ]  # fmt: skip
        self._replicas.handle_state_changes(to_stop, R.OFFLINE)
        offline = [r for r in replicas if context.replica_state(r) is R.OFFLINE]
        self._replicas.handle_state_changes([r for r in offline if not context.is_replica_online(r.broker_id)],
                                            R.DELETION_INELIGIBLE)
        self._replicas.handle_state_changes([r for r in offline if context.is_replica_online(r.broker_id)],
                                            R.DELETION_STARTED)

    def _complete(self, topic: str, replicas: list[PartitionReplica]) -> None:
        context = self._context
        self._replicas.handle_state_changes(replicas, R.NON_EXISTENT)
        self._partitions.handle_state_changes(context.partitions_of(topic), PartitionState.NON_EXISTENT)
        self._zk.delete_topic(topic)
        context.remove_topic(topic)
        logger.info("controller: deleted topic %s", topic)
