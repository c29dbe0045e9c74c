"""Moving partitions between states, electing leaders on the way (Kafka's ZkPartitionStateMachine).

Going ONLINE is where leaders are chosen. A NEW partition gets its first live
replica as leader and every live replica as ISR (its state znode is created);
an OFFLINE or ONLINE one gets a leader by the election rule the caller names,
with the next leader epoch, written conditionally on the state znode's
version and fenced by the controller epoch. Every replica of a partition whose
leadership changed hears it through LeaderAndIsr; every live broker, through
UpdateMetadata.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Iterable

from broker_core.cluster.zk.controller_election import Leadership
from broker_core.cluster.zk.controller_zk import NO_STATE_VERSION, ControllerMovedError, ControllerZk
from broker_core.cluster.zk.znodes import LeaderIsrAndControllerEpoch
from broker_core.controller import leader_election as elections
from broker_core.controller.context import ControllerContext, LeaderAndIsr
from broker_core.controller.request_batch import ControllerRequestBatch
from broker_core.controller.states import PartitionState, check_partition_transition
from spate.protocol.errors import ErrorCode
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)


class ElectionStrategy(enum.Enum):
    OFFLINE = "offline"
    REASSIGNMENT = "reassignment"
    PREFERRED = "preferred"
    CONTROLLED_SHUTDOWN = "controlled shutdown"


class PartitionStateMachine:
    def __init__(
        self,
        context: ControllerContext,
        zk: ControllerZk,
        batch: ControllerRequestBatch,
        leadership: Callable[[], Leadership],
        unclean_allowed: Callable[[str], bool],
    ) -> None:
        self._context = context
        self._zk = zk
        self._batch = batch
        self._leadership = leadership
        self._unclean_allowed = unclean_allowed

    def startup(self) -> None:
        """Give every known partition its state from the leadership read at failover, then elect where needed."""
        context = self._context
        for tp in context.all_partitions():
            leadership = context.leadership.get(tp)
            if leadership is None:
                context.partition_states[tp] = PartitionState.NEW
            elif leadership.leader in context.live_brokers:
                context.partition_states[tp] = PartitionState.ONLINE
            else:
                context.partition_states[tp] = PartitionState.OFFLINE
        self.trigger_online_partition_state_change()

    def trigger_online_partition_state_change(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        """Elect leaders for NEW and OFFLINE partitions (of topics not being deleted)."""
        context = self._context
        candidates = partitions if partitions is not None else context.all_partitions()
        due = [
            tp for tp in candidates
            if context.partition_state(tp) in (PartitionState.NEW, PartitionState.OFFLINE)
            and not context.is_deleting(tp.topic)
        ]  # fmt: skip
        if due:
            self.handle_state_changes(due, PartitionState.ONLINE, ElectionStrategy.OFFLINE)

    def handle_state_changes(
        self,
        partitions: Iterable[TopicPartition],
        target: PartitionState,
        strategy: ElectionStrategy = ElectionStrategy.OFFLINE,
    ) -> dict[TopicPartition, ErrorCode]:
        """Move ``partitions`` to ``target``; returns the partitions that could not get there, with why."""
        partitions = [tp for tp in partitions if tp in self._context.assignments]
        for tp in partitions:
            check_partition_transition(str(tp), self._context.partition_state(tp), target)
        if target is not PartitionState.ONLINE:
            for tp in partitions:
                if target is PartitionState.NON_EXISTENT:
                    self._context.partition_states.pop(tp, None)
                else:
                    self._context.partition_states[tp] = target
            return {}
        new = [tp for tp in partitions if self._context.partition_state(tp) is PartitionState.NEW]
        existing = [tp for tp in partitions if self._context.partition_state(tp) is not PartitionState.NEW]
        failures = self._initialize_leaders(new)
        failures.update(self._elect_leaders(existing, strategy))
        return failures

    # --- NEW -> ONLINE -------------------------------------------------------------------

    def _initialize_leaders(self, partitions: list[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
        context = self._context
        failures: dict[TopicPartition, ErrorCode] = {}
        writes: dict[TopicPartition, tuple[LeaderIsrAndControllerEpoch, int]] = {}
        for tp in partitions:
            live = [r for r in context.replicas_of(tp) if r in context.live_brokers]
            if not live:
                logger.error("controller: new partition %s has no live replica among %s", tp, context.replicas_of(tp))
                failures[tp] = ErrorCode.LEADER_NOT_AVAILABLE
                continue
            writes[tp] = (LeaderIsrAndControllerEpoch(live[0], 0, tuple(live), context.epoch), NO_STATE_VERSION)
        versions, errors = self._zk.write_partition_states(writes, self._leadership())
        self._raise_if_moved(errors)
        for tp, error in errors.items():
            logger.error("controller: could not create the state of new partition %s: %s", tp, error)
            failures[tp] = ErrorCode.NOT_CONTROLLER
        for tp, version in versions.items():
            state = writes[tp][0]
            leadership = LeaderAndIsr(state.leader, state.leader_epoch, state.isr, state.controller_epoch, version)
            self._became_online(tp, leadership, is_new=True)
        return failures

    # --- OFFLINE/ONLINE -> ONLINE ----------------------------------------------------------

    def _elect_leaders(
        self, partitions: list[TopicPartition], strategy: ElectionStrategy
    ) -> dict[TopicPartition, ErrorCode]:
        context = self._context
        failures: dict[TopicPartition, ErrorCode] = {}
        writes: dict[TopicPartition, tuple[LeaderIsrAndControllerEpoch, int]] = {}
        elected: dict[TopicPartition, LeaderAndIsr] = {}
        for tp in partitions:
            current = context.leadership.get(tp)
            if current is None:
                failures[tp] = ErrorCode.LEADER_NOT_AVAILABLE
                continue
            if current.controller_epoch > context.epoch:
                # A newer controller wrote this state: this one is stale (Kafka aborts the election).
                raise ControllerMovedError(f"{tp} was written by controller epoch {current.controller_epoch}")
            election = self._elect(tp, current, strategy)
            if not election.elected:
                failures[tp] = (
                    ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
                    if strategy is ElectionStrategy.PREFERRED
                    else ErrorCode.LEADER_NOT_AVAILABLE
                )
                context.partition_states[tp] = PartitionState.OFFLINE
                continue
            if election.unclean:
                logger.warning(
                    "controller: UNCLEAN leader election for %s: broker %d was not in the ISR %s; records "
                    "acknowledged by the old ISR may be lost", tp, election.leader, list(current.isr),
                )
            new = current.elect(election.leader, election.isr, context.epoch)
            elected[tp] = new
            writes[tp] = (
                LeaderIsrAndControllerEpoch(new.leader, new.leader_epoch, new.isr, new.controller_epoch),
                current.zk_version,
            )
        versions, errors = self._zk.write_partition_states(writes, self._leadership())
        self._raise_if_moved(errors)
        for tp, error in errors.items():
            logger.warning("controller: election for %s lost a race (%s); it is retried on the next event", tp, error)
            failures[tp] = ErrorCode.NOT_CONTROLLER
        for tp, version in versions.items():
            new = elected[tp]
            self._became_online(
                tp, LeaderAndIsr(new.leader, new.leader_epoch, new.isr, new.controller_epoch, version), is_new=False
            )
        return failures

    def _elect(self, tp: TopicPartition, current: LeaderAndIsr, strategy: ElectionStrategy) -> elections.Election:
        context = self._context
        assignment = context.replicas_of(tp)
        # A replica whose log dir failed holds nothing to lead with.
        offline = context.offline_dir_replicas(tp)
        live = context.electable_brokers() - offline
        if strategy is ElectionStrategy.REASSIGNMENT:
            return elections.reassignment_election(context.reassignments.get(tp, assignment), current.isr, live)
        if strategy is ElectionStrategy.PREFERRED:
            return elections.preferred_replica_election(assignment, current.isr, live)
        if strategy is ElectionStrategy.CONTROLLED_SHUTDOWN:
            return elections.controlled_shutdown_election(
                assignment, current.isr, context.live_or_shutting_down() - offline, context.shutting_down
            )
        clean = elections.offline_partition_election(assignment, current.isr, live, unclean_allowed=False)
        if clean.elected or not any(r in live for r in assignment):
            return clean
        # Only now is the topic's setting worth a ZooKeeper read.
        return elections.offline_partition_election(
            assignment, current.isr, live, unclean_allowed=self._unclean_allowed(tp.topic)
        )

    def _became_online(self, tp: TopicPartition, leadership: LeaderAndIsr, *, is_new: bool) -> None:
        context = self._context
        context.leadership[tp] = leadership
        context.partition_states[tp] = PartitionState.ONLINE
        replicas = [r for r in context.replicas_of(tp) if context.is_replica_online(r, tp)]
        self._batch.add_leader_and_isr(replicas, tp, leadership, is_new=is_new)

    @staticmethod
    def _raise_if_moved(errors: dict[TopicPartition, Exception]) -> None:
        for error in errors.values():
            if isinstance(error, ControllerMovedError):
                raise error
