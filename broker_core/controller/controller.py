"""The active controller (Kafka's KafkaController, ZooKeeper era).

One broker of a cluster is elected controller (``ControllerElection``); this
object is that broker's controller while it holds the office. All of its work
happens on one event thread, one event at a time: ZooKeeper watches and
requests from brokers only queue events, so the controller's view of the
cluster (:class:`ControllerContext`) has a single writer and needs no lock.

On election it loads brokers, topics and partition states from ZooKeeper,
tells every live broker the whole picture (UpdateMetadata, and LeaderAndIsr
for the replicas it hosts), elects leaders where none is alive, and resumes
topic deletions, reassignments and preferred elections left pending. After
that it follows events: brokers coming and going, topics created, grown and
deleted, ISR changes, admin requests, controlled shutdowns. Every write it
makes is fenced by its controller epoch; the moment a newer controller exists
its writes fail and it stops acting.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any

from kazoo.exceptions import KazooException

from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.controller_election import Leadership
from broker_core.cluster.zk.controller_zk import ControllerMovedError, ControllerZk, LiveBroker, MalformedZNode
from broker_core.cluster.zk.znodes import TopicConfigZNode
from broker_core.config.broker_config import BrokerConfig
from broker_core.controller import events as ev
from broker_core.controller.channel_manager import BrokerEndpoint, ControllerChannelManager
from broker_core.controller.context import ControllerContext, LeaderAndIsr, PartitionReplica
from broker_core.controller.log_dir_failures import LogDirFailureHandler
from broker_core.controller.partition_state_machine import ElectionStrategy, PartitionStateMachine
from broker_core.controller.reassignment import ReassignmentManager
from broker_core.controller.replica_state_machine import ReplicaStateMachine
from broker_core.controller.request_batch import ControllerRequestBatch
from broker_core.controller.states import PartitionState, ReplicaState
from broker_core.controller.topic_deletion import TopicDeletionManager
from broker_core.security.inter_broker import InterBrokerSecurity
from spate.protocol.errors import ErrorCode, KafkaError
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

_STOP = object()
UNCLEAN_ELECTION = "unclean.leader.election.enable"
# Events whose handlers read what they act on from ZooKeeper: after a ZooKeeper failure they are simply handled
# again, since the watch that queued them has already fired and will not fire for the same change twice.
# Startup is one too, so a controller whose start met a blip is not left half started (Kafka resigns and runs
# the whole failover again instead).
REREAD_AFTER_ZK_FAILURE = (
    ev.Startup, ev.BrokerChange, ev.TopicChange, ev.PartitionModifications, ev.TopicDeletion,
    ev.IsrChangeNotification, ev.PartitionReassignment, ev.PreferredReplicaElection, ev.LogDirEventNotification,
)
ZK_RETRY_BACKOFF_S = 1.0


class KafkaController:
    def __init__(self, config: BrokerConfig, session: ZkSession, leadership: Leadership) -> None:
        self._config = config
        self._broker_id = leadership.broker_id
        self._leadership = leadership
        self._zk = ControllerZk(session, inter_broker_listener=config.inter_broker_listener_name)
        self._session = session
        self.context = ControllerContext(epoch=leadership.epoch)
        self._channel = ControllerChannelManager(
            controller_id=self._broker_id,
            timeout_s=config.get_int("controller.socket.timeout.ms") / 1000,
            security=InterBrokerSecurity.from_config(config),
        )
        self._batch = ControllerRequestBatch(self.context, self._channel, self._broker_id)
        self.partitions = PartitionStateMachine(
            self.context, self._zk, self._batch, lambda: self._leadership, self._unclean_allowed
        )
        self.replicas = ReplicaStateMachine(self.context, self._zk, self._batch, lambda: self._leadership)
        self.deletion = TopicDeletionManager(self.context, self._zk, self.partitions, self.replicas, self._batch)
        self.reassignments = ReassignmentManager(
            self.context, self._zk, self.partitions, self.replicas, self._batch, lambda: self._leadership
        )
        self.log_dirs = LogDirFailureHandler(self.context, self._zk, self.partitions, self.replicas, self._batch,
                                             self._report)
        self._events: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._active = threading.Event()
        self._rebalance_timer: threading.Timer | None = None

    # --- life cycle (called by the election, on its thread) --------------------------------

    def start(self) -> None:
        self._active.set()
        self._thread = threading.Thread(target=self._run, name=f"controller-{self._broker_id}", daemon=True)
        self._thread.start()
        self._events.put(ev.Startup())
        logger.info("controller: broker %d is controller at epoch %d", self._broker_id, self._leadership.epoch)

    def stop(self) -> None:
        """Resign: stop handling events and talking to brokers (bounded wait)."""
        self._active.clear()
        if self._rebalance_timer is not None:
            self._rebalance_timer.cancel()
        self._events.put(_STOP)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=30)
        self._channel.shutdown()
        logger.info("controller: broker %d resigned as controller (epoch %d)", self._broker_id, self.context.epoch)

    def is_active(self) -> bool:
        return self._active.is_set()

    def controlled_shutdown(self, broker_id: int, broker_epoch: int) -> Future:
        """Move leadership away from ``broker_id``; resolves to the partitions it still leads."""
        result: Future = Future()
        if not self.is_active():
            result.set_exception(KafkaError(ErrorCode.NOT_CONTROLLER, "this broker is no longer the controller"))
        else:
            self._events.put(ev.ControlledShutdown(broker_id, broker_epoch, result))
        return result

    # --- the event thread ------------------------------------------------------------------

    def _run(self) -> None:
        handlers: dict[type, Callable[[Any], None]] = {
            ev.Startup: lambda e: self._on_startup(),
            ev.BrokerChange: lambda e: self._on_broker_change(),
            ev.TopicChange: lambda e: self._on_topic_change(),
            ev.PartitionModifications: lambda e: self._on_partition_modifications(e.topic),
            ev.TopicDeletion: lambda e: self._on_topic_deletion(),
            ev.IsrChangeNotification: lambda e: self._on_isr_change(),
            ev.PartitionReassignment: lambda e: self._on_reassignment_request(),
            ev.PreferredReplicaElection: lambda e: self._on_preferred_election(),
            ev.ControlledShutdown: self._on_controlled_shutdown,
            ev.StopReplicaResponse: self._on_stop_replica_response,
            ev.LeaderAndIsrResponse: self._on_leader_and_isr_response,
            ev.LogDirEventNotification: lambda e: self._on_log_dir_event(),
            ev.AutoLeaderRebalance: lambda e: self._on_auto_leader_rebalance(),
        }
        while True:
            event = self._events.get()
            if event is _STOP:
                break
            if not self.is_active():
                self._refuse(event)
                continue
            try:
                handlers[type(event)](event)
            except ControllerMovedError as exc:
                logger.warning("controller: a newer controller was elected (%s); this one stops acting", exc)
                self._active.clear()
                self._refuse(event)
            except (KazooException, OSError) as exc:
                retried = isinstance(event, REREAD_AFTER_ZK_FAILURE)
                logger.error("controller: ZooKeeper failed while handling %s: %s%s", type(event).__name__, exc,
                             f"; handled again in {ZK_RETRY_BACKOFF_S:.0f} s" if retried else "")
                if retried:
                    self._handle_again_later(event)
                else:
                    self._refuse(event)
            except Exception:
                logger.exception("controller: handling %s failed", type(event).__name__)
                self._refuse(event)
        while not self._events.empty():
            self._refuse(self._events.get_nowait())

    def _handle_again_later(self, event: ev.ControllerEvent) -> None:
        timer = threading.Timer(ZK_RETRY_BACKOFF_S, self._enqueue(event), args=(None,))
        timer.daemon = True
        timer.start()

    @staticmethod
    def _refuse(event: Any) -> None:
        if isinstance(event, ev.ControlledShutdown) and not event.result.done():
            event.result.set_exception(KafkaError(ErrorCode.NOT_CONTROLLER, "the controller is not available"))

    def _enqueue(self, event: ev.ControllerEvent) -> Callable[[Any], None]:
        """A ZooKeeper watch that queues ``event`` when it fires."""

        def fire(_watched: Any) -> None:
            if self.is_active():
                self._events.put(event)

        return fire

    def _send(self) -> None:
        self._batch.send(
            self.context.epoch,
            on_stop_replica=lambda broker_id, errors: self._events.put(ev.StopReplicaResponse(broker_id, errors)),
            on_leader_and_isr=lambda broker_id, errors: self._events.put(ev.LeaderAndIsrResponse(broker_id, errors)),
        )

    # --- failover --------------------------------------------------------------------------

    def _on_startup(self) -> None:
        context, zk = self.context, self._zk
        zk.ensure_paths()
        brokers, malformed = zk.live_brokers(watch=self._enqueue(ev.BrokerChange()))
        self._report(malformed)
        self._set_live_brokers(brokers)
        self._load_topics(zk.topic_names(watch=self._enqueue(ev.TopicChange())))
        pending_deletions = zk.topics_to_delete(watch=self._enqueue(ev.TopicDeletion()))
        context.topics_to_delete.update(t for t in pending_deletions if t in context.topics)
        for gone in set(pending_deletions) - context.topics:
            zk.remove_deletion_marker(gone)
        self._batch.add_update_metadata(context.live_or_shutting_down(), context.all_partitions())
        for broker_id in context.live_brokers:
            self._batch.mark_full(broker_id)
        self.replicas.startup()
        self.partitions.startup()
        self.deletion.resume()
        self._send()
        for event in (ev.IsrChangeNotification(), ev.LogDirEventNotification(), ev.PartitionReassignment(),
                      ev.PreferredReplicaElection()):
            self._events.put(event)
        self._schedule_rebalance()
        logger.info(
            "controller: took charge of %d broker(s), %d topic(s), %d partition(s)",
            len(context.live_brokers), len(context.topics), len(context.assignments),
        )

    def _load_topics(self, names: Iterable[str]) -> list[TopicPartition]:
        """Add topics to the context with their assignments and any partition states; returns their partitions."""
        context, zk = self.context, self._zk
        assignments, malformed = zk.topic_assignments(
            names, watch=lambda topic: self._enqueue(ev.PartitionModifications(topic))
        )
        self._report(malformed)
        added: list[TopicPartition] = []
        for name, (assignment, _) in assignments.items():
            if assignment.topic_id is None:
                logger.warning("controller: topic %s has no topic id in ZooKeeper", name)
            context.add_topic(name, assignment.topic_id, dict(assignment.partitions))
            added.extend(context.partitions_of(name))
        states, malformed = zk.partition_states(added)
        self._report(malformed)
        for tp, stored in states.items():
            state = stored.state
            context.leadership[tp] = LeaderAndIsr(
                state.leader, state.leader_epoch, state.isr, state.controller_epoch, stored.zk_version
            )
        return added

    # --- brokers -----------------------------------------------------------------------------

    def _set_live_brokers(self, brokers: dict[int, LiveBroker]) -> None:
        context = self.context
        context.live_brokers = {i: b.registration for i, b in brokers.items()}
        context.broker_epochs = {i: b.epoch for i, b in brokers.items()}
        for broker_id in set(self._channel.brokers()) - set(brokers):
            self._channel.remove_broker(broker_id)
        for broker_id, broker in brokers.items():
            reg = broker.registration
            self._channel.add_broker(BrokerEndpoint(broker_id, reg.host, reg.port))

    def _on_broker_change(self) -> None:
        context = self.context
        brokers, malformed = self._zk.live_brokers(watch=self._enqueue(ev.BrokerChange()))
        self._report(malformed)
        before = dict(context.broker_epochs)
        bounced = {i for i, b in brokers.items() if i in before and before[i] != b.epoch}
        new = (set(brokers) - set(before)) | bounced
        dead = (set(before) - set(brokers)) | bounced
        if not new and not dead:
            return
        logger.info("controller: brokers joined %s, left %s", sorted(new - bounced) or "none",
                    sorted(dead - bounced) or "none")
        if dead:
            for broker_id in dead:
                context.live_brokers.pop(broker_id, None)
                context.broker_epochs.pop(broker_id, None)
                self._channel.remove_broker(broker_id)
            self._on_brokers_failed(dead)
        self._set_live_brokers(brokers)
        if new:
            self._on_brokers_started(new)

    def _on_brokers_started(self, broker_ids: set[int]) -> None:
        context = self.context
        self.log_dirs.forget(broker_ids)
        self._batch.add_update_metadata(context.live_or_shutting_down(), context.all_partitions())
        for broker_id in broker_ids:
            self._batch.mark_full(broker_id)
        replicas = [
            r for r in context.replicas_on(broker_ids)
            if not context.is_deleting(r.partition.topic)
            and context.replica_state(r) in (ReplicaState.NEW, ReplicaState.ONLINE, ReplicaState.OFFLINE)
        ]  # fmt: skip
        self.replicas.handle_state_changes(replicas, ReplicaState.ONLINE)
        self.partitions.trigger_online_partition_state_change()
        for broker_id in broker_ids:
            self.deletion.on_broker_startup(broker_id)
        self.reassignments.check_all()
        self._send()

    def _on_brokers_failed(self, broker_ids: set[int]) -> None:
        context = self.context
        self.log_dirs.forget(broker_ids)
        context.shutting_down -= broker_ids
        led = [
            tp for tp, state in context.leadership.items()
            if state.leader in broker_ids and not context.is_deleting(tp.topic)
        ]  # fmt: skip
        self.partitions.handle_state_changes(led, PartitionState.OFFLINE)
        self.partitions.trigger_online_partition_state_change()
        replicas = [
            r for r in context.replicas_on(broker_ids)
            if not context.is_deleting(r.partition.topic) and context.replica_state(r) is not ReplicaState.NON_EXISTENT
        ]  # fmt: skip
        self.replicas.handle_state_changes(replicas, ReplicaState.OFFLINE)
        for broker_id in broker_ids:
            self.deletion.on_broker_failure(broker_id)
        # Brokers learn the new set of live brokers even when no leadership moved.
        self._batch.add_update_metadata(context.live_or_shutting_down(), [])
        self._send()

    # --- topics ------------------------------------------------------------------------------

    def _on_topic_change(self) -> None:
        context = self.context
        names = set(self._zk.topic_names(watch=self._enqueue(ev.TopicChange())))
        for gone in context.topics - names:
            context.remove_topic(gone)
        new = sorted(names - context.topics)
        if not new:
            return
        logger.info("controller: new topic(s) %s", ", ".join(new))
        partitions = self._load_topics(new)
        self._on_new_partitions(partitions)

    def _on_partition_modifications(self, topic: str) -> None:
        context = self.context
        assignments, malformed = self._zk.topic_assignments(
            [topic], watch=lambda name: self._enqueue(ev.PartitionModifications(name))
        )
        self._report(malformed)
        if topic not in assignments or topic not in context.topics or context.is_deleting(topic):
            return
        assignment, _ = assignments[topic]
        added = [
            TopicPartition(topic, p) for p in assignment.partitions
            if TopicPartition(topic, p) not in context.assignments
        ]  # fmt: skip
        if not added:
            return
        for tp in added:
            context.assignments[tp] = tuple(assignment.partitions[tp.partition])
        logger.info("controller: %d partition(s) added to %s", len(added), topic)
        self._on_new_partitions(added)

    def _on_new_partitions(self, partitions: list[TopicPartition]) -> None:
        context = self.context
        for tp in partitions:
            known = context.leadership.get(tp)
            if known is None:
                self.partitions.handle_state_changes([tp], PartitionState.NEW)
            else:
                # A state written before this controller saw the topic is kept, not re-elected.
                alive = known.leader in context.live_brokers
                context.partition_states[tp] = PartitionState.ONLINE if alive else PartitionState.OFFLINE
        replicas = context.replicas_for(partitions)
        self.replicas.handle_state_changes(replicas, ReplicaState.NEW)
        for tp in partitions:
            if tp in context.leadership and context.partition_state(tp) is PartitionState.ONLINE:
                live = [b for b in context.replicas_of(tp) if context.is_replica_online(b, tp)]
                self._batch.add_leader_and_isr(live, tp, context.leadership[tp])
        self.partitions.trigger_online_partition_state_change(partitions)
        self.replicas.handle_state_changes(
            [r for r in replicas if context.is_replica_online(r.broker_id, r.partition)], ReplicaState.ONLINE
        )
        self.replicas.handle_state_changes(
            [r for r in replicas if not context.is_replica_online(r.broker_id, r.partition)], ReplicaState.OFFLINE
        )
        self._send()

    def _on_topic_deletion(self) -> None:
        context = self.context
        names = self._zk.topics_to_delete(watch=self._enqueue(ev.TopicDeletion()))
        for gone in [t for t in names if t not in context.topics]:
            self._zk.remove_deletion_marker(gone)
        if not self._config.get_bool("delete.topic.enable"):
            for topic in names:
                logger.warning("controller: deletion of %s refused: delete.topic.enable is false", topic)
                self._zk.remove_deletion_marker(topic)
            return
        self.deletion.enqueue(t for t in names if t in context.topics)
        self._send()

    def _on_stop_replica_response(self, event: ev.StopReplicaResponse) -> None:
        self.deletion.on_stop_replica_response(event.broker_id, event.errors)
        self.reassignments.on_stop_replica_response(event.broker_id, event.errors)
        self._send()

    # --- log dir failures ---------------------------------------------------------------------

    def _on_log_dir_event(self) -> None:
        self.log_dirs.on_notifications(watch=self._enqueue(ev.LogDirEventNotification()))
        self._send()

    def _on_leader_and_isr_response(self, event: ev.LeaderAndIsrResponse) -> None:
        self.log_dirs.on_leader_and_isr_response(event.broker_id, event.errors)
        self._send()

    # --- ISR changes, reassignment, preferred leaders -------------------------------------------

    def _on_isr_change(self) -> None:
        context = self.context
        notifications, malformed = self._zk.isr_change_notifications(watch=self._enqueue(ev.IsrChangeNotification()))
        self._report(malformed)
        changed = sorted({tp for _, partitions in notifications for tp in partitions if tp in context.assignments})
        if changed:
            states, malformed = self._zk.partition_states(changed)
            self._report(malformed)
            for tp, stored in states.items():
                state = stored.state
                context.leadership[tp] = LeaderAndIsr(
                    state.leader, state.leader_epoch, state.isr, state.controller_epoch, stored.zk_version
                )
            self._batch.add_update_metadata(context.live_or_shutting_down(), changed)
            self.replicas.remove_from_isr(self._ineligible_isr_members(changed))
            self.reassignments.check(changed)
            self._send()
        self._zk.remove_isr_change_notifications(name for name, _ in notifications)
        self._zk.remove_isr_change_notifications(m.path.rsplit("/", 1)[-1] for m in malformed)

    def _ineligible_isr_members(self, partitions: Iterable[TopicPartition]) -> list[PartitionReplica]:
        """Followers a leader put in an ISR whose broker is shutting down or gone (Kafka's INELIGIBLE_REPLICA).

        A leader writes its ISR expansions itself and only knows which brokers
        are registered; a fetch sent just before a broker stopped its fetchers
        can bring it back, and an idle partition would keep it there.
        """
        context = self.context
        eligible = context.electable_brokers()
        return [
            PartitionReplica(tp, broker_id)
            for tp in partitions
            if (state := context.leadership.get(tp)) is not None and state.leader in eligible
            and not context.is_deleting(tp.topic)
            for broker_id in state.isr
            if broker_id != state.leader and broker_id not in eligible
        ]  # fmt: skip

    def _on_reassignment_request(self) -> None:
        self.reassignments.on_request(watch=self._enqueue(ev.PartitionReassignment()))
        self._send()

    def _on_preferred_election(self) -> None:
        partitions, malformed = self._zk.preferred_election_request(watch=self._enqueue(ev.PreferredReplicaElection()))
        if malformed is not None:
            self._report([malformed])
        self.elect_preferred(partitions)
        self._zk.remove_preferred_election_request()
        self._send()

    def elect_preferred(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, ErrorCode]:
        """Move leadership to each partition's first replica where it does not lead already."""
        context = self.context
        due = [
            tp for tp in partitions
            if tp in context.assignments and not context.is_deleting(tp.topic)
            and tp in context.leadership and context.leadership[tp].leader != context.replicas_of(tp)[0]
        ]  # fmt: skip
        if due:
            logger.info("controller: preferred leader election for %d partition(s)", len(due))
        return self.partitions.handle_state_changes(due, PartitionState.ONLINE, ElectionStrategy.PREFERRED)

    def _on_auto_leader_rebalance(self) -> None:
        context = self.context
        threshold = self._config.get_int("leader.imbalance.per.broker.percentage") / 100
        due: list[TopicPartition] = []
        for broker_id in sorted(context.electable_brokers()):
            preferred = [
                tp for tp, replicas in context.assignments.items()
                if replicas and replicas[0] == broker_id and not context.is_deleting(tp.topic)
                and tp in context.leadership
            ]  # fmt: skip
            misled = [tp for tp in preferred if context.leadership[tp].leader != broker_id]
            if preferred and len(misled) / len(preferred) > threshold:
                due.extend(misled)
        if due:
            self.elect_preferred(sorted(due))
            self._send()
        self._schedule_rebalance()

    def _schedule_rebalance(self) -> None:
        if not self._config.get_bool("auto.leader.rebalance.enable") or not self.is_active():
            return
        interval = self._config.get_int("leader.imbalance.check.interval.seconds")
        timer = threading.Timer(interval, lambda: self._events.put(ev.AutoLeaderRebalance()))
        timer.daemon = True
        self._rebalance_timer = timer
        timer.start()

    # --- controlled shutdown ---------------------------------------------------------------------

    def _on_controlled_shutdown(self, event: ev.ControlledShutdown) -> None:
        context = self.context
        broker_id = event.broker_id
        if broker_id not in context.live_brokers:
            event.result.set_exception(
                KafkaError(ErrorCode.BROKER_NOT_AVAILABLE, f"broker {broker_id} is not registered")
            )
            return
        if event.broker_epoch != -1 and event.broker_epoch < context.broker_epochs.get(broker_id, -1):
            event.result.set_exception(KafkaError(ErrorCode.STALE_BROKER_EPOCH, f"broker {broker_id}: stale epoch"))
            return
        context.shutting_down.add(broker_id)
        replicated = [tp for tp in context.assignments if len(context.replicas_of(tp)) > 1]
        led = [tp for tp in replicated if context.leadership.get(tp) and context.leadership[tp].leader == broker_id]
        self.partitions.handle_state_changes(led, PartitionState.ONLINE, ElectionStrategy.CONTROLLED_SHUTDOWN)
        followed = [
            PartitionReplica(tp, broker_id) for tp in replicated
            if broker_id in context.replicas_of(tp) and context.leadership.get(tp)
            and context.leadership[tp].leader != broker_id
            and context.replica_state(PartitionReplica(tp, broker_id)) is not ReplicaState.OFFLINE
        ]  # fmt: skip
        self.replicas.handle_state_changes(followed, ReplicaState.OFFLINE)
        self._send()
        remaining = sorted(
            tp for tp in replicated if context.leadership.get(tp) and context.leadership[tp].leader == broker_id
        )
        logger.info("controller: broker %d is shutting down; %d partition(s) still led by it", broker_id,
                    len(remaining))
        event.result.set_result(remaining)

    # --- helpers ------------------------------------------------------------------------------

    def _unclean_allowed(self, topic: str) -> bool:
        try:
            data, _ = self._session.get(TopicConfigZNode.path(topic))
            configs = TopicConfigZNode.decode(topic, data)
        except Exception:  # no overrides, or unreadable ones: the broker default applies
            configs = {}
        if UNCLEAN_ELECTION in configs:
            return configs[UNCLEAN_ELECTION].strip().lower() == "true"
        return self._config.get_bool(UNCLEAN_ELECTION)

    @staticmethod
    def _report(malformed: Iterable[MalformedZNode]) -> None:
        for bad in malformed:
            logger.error("controller: ignoring malformed znode %s: %s", bad.path, bad.reason)
