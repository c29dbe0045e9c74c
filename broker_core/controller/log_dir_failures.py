"""Replicas on failed log dirs (Kafka's onBrokerLogDirFailure and LeaderAndIsrResponseReceived).

A broker whose log dir failed leaves a ``/log_dir_event_notification``
znode. The controller does not learn from it which replicas were in that
dir; it asks, sending the broker a LeaderAndIsr for every replica it hosts.
The broker answers KAFKA_STORAGE_ERROR for those on the failed dir (whatever
their epoch) and NONE for the rest. Every LeaderAndIsr answer is read the
same way: replicas newly answered KAFKA_STORAGE_ERROR go offline (their
partitions elect another leader if they led, they leave the ISR, and
metadata lists them as offline); replicas answered NONE are online again.
What a broker reported is forgotten when it restarts or dies.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from broker_core.cluster.zk.controller_zk import ControllerZk, MalformedZNode
from broker_core.controller.context import ControllerContext, PartitionReplica
from broker_core.controller.partition_state_machine import PartitionStateMachine
from broker_core.controller.replica_state_machine import ReplicaStateMachine
from broker_core.controller.request_batch import ControllerRequestBatch
from broker_core.controller.states import PartitionState, ReplicaState
from spate.protocol.errors import ErrorCode
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)


class LogDirFailureHandler:
    def __init__(
        self,
        context: ControllerContext,
        zk: ControllerZk,
        partitions: PartitionStateMachine,
        replicas: ReplicaStateMachine,
        batch: ControllerRequestBatch,
        report: Callable[[list[MalformedZNode]], None],
    ) -> None:
        self._context = context
        self._zk = zk
        self._partitions = partitions
        self._replicas = replicas
        self._batch = batch
        self._report = report

    def on_notifications(self, watch: Callable[[object], None]) -> None:
        """Ask every live broker that left a notification which replicas it still holds; consume them."""
        context = self._context
        notifications, malformed = self._zk.log_dir_event_notifications(watch=watch)
        self._report(malformed)
        brokers = {broker_id for _, broker_id in notifications if broker_id in context.live_brokers}
        if brokers:
            logger.warning("controller: log dirs failed on broker(s) %s", sorted(brokers))
            replicas = [r for r in context.replicas_on(brokers) if context.replica_state(r) is ReplicaState.ONLINE]
            self._replicas.handle_state_changes(replicas, ReplicaState.ONLINE)
        self._zk.remove_log_dir_event_notifications(name for name, _ in notifications)
        self._zk.remove_log_dir_event_notifications(m.path.rsplit("/", 1)[-1] for m in malformed)

    def on_leader_and_isr_response(self, broker_id: int, errors: dict[TopicPartition, int]) -> None:
        """Take the replicas ``broker_id`` newly answered KAFKA_STORAGE_ERROR for offline."""
        context = self._context
        if broker_id not in context.live_brokers:
            return
        previous = context.replicas_on_offline_dirs.get(broker_id, set())
        failed = {tp for tp, code in errors.items() if code == ErrorCode.KAFKA_STORAGE_ERROR}
        held = {tp for tp, code in errors.items() if code == ErrorCode.NONE}
        current = (previous - held) | failed
        if current:
            context.replicas_on_offline_dirs[broker_id] = current
        else:
            context.replicas_on_offline_dirs.pop(broker_id, None)
        new = sorted(current - previous)
        if not new:
            return
        logger.warning("controller: replicas of %s on broker %d are on a failed log dir: offline",
                       ", ".join(map(str, new)), broker_id)
        led = [tp for tp in new if tp in context.leadership and context.leadership[tp].leader == broker_id
               and not context.is_deleting(tp.topic)]
        self._partitions.handle_state_changes(led, PartitionState.OFFLINE)
        self._partitions.trigger_online_partition_state_change()
        replicas = [PartitionReplica(tp, broker_id) for tp in new if tp in context.assignments]
        self._replicas.handle_state_changes(
            [r for r in replicas if context.replica_state(r) is not ReplicaState.NON_EXISTENT], ReplicaState.OFFLINE
        )
        self._batch.add_update_metadata(context.live_or_shutting_down(), new)

    def forget(self, broker_ids: set[int]) -> None:
        """Brokers that restarted or died: a restarted one says afresh, in its LeaderAndIsr answers, what it lost."""
        for broker_id in broker_ids:
            self._context.replicas_on_offline_dirs.pop(broker_id, None)
