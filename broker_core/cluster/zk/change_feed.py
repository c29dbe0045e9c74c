"""From ZooKeeper watches to :class:`MetadataChange`\\ s, without repeating the store's own writes.

The feed keeps a *view*: the broker ids, topics (id and partitions),
partition state versions and config change notifications it has already
reported. Watches are set on what Kafka's controller watches:

* the children of ``/brokers/ids`` (brokers come and go),
* the children of ``/brokers/topics`` (topics created and deleted),
* each topic znode (partitions added),
* each partition state znode (leader / ISR changes),
* the children of ``/config/changes`` (config overrides changed).

A watch fires once; the feed then re-reads the znode (setting the watch
again), compares it with the view and reports the difference. ZooKeeper
delivers a client's watch events in the order the changes happened, so
changes made elsewhere are reported in order, but several quick changes to
one znode may arrive as one: a listener re-reads what it cares about.

The store reports its own writes itself, in commit order, and records them
in the view under its commit lock; the feed processes watch events under
the same lock, so a write made here is never reported twice.

After a lost connection kazoo forgets every watch: on reconnecting the feed
re-reads everything, setting the watches again and reporting what changed
meanwhile.
"""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass, field
from typing import Callable, Iterable

from kazoo.exceptions import KazooException, NoNodeError
from kazoo.protocol.states import EventType, WatchedEvent

from broker_core.cluster.metadata_store import ChangeKind, MetadataChange
from broker_core.cluster.zk.change_delivery import ChangeDelivery
from broker_core.cluster.zk.client import SessionEvent, SessionState, ZkSession
from broker_core.cluster.zk.errors import ZNodeDecodeError, ZooKeeperUnavailableError
from broker_core.cluster.zk.event_thread import EventThread
from broker_core.cluster.zk.znodes.brokers import BrokerIdsZNode
from broker_core.cluster.zk.znodes.configs import (
    CONFIG_CHANGE_EXPIRATION_MS,
    TOPIC,
    ConfigChangeNotificationZNode,
    ConfigChangesZNode,
)
from broker_core.cluster.zk.znodes.topics import TopicPartitionStateZNode, TopicsZNode, TopicZNode

logger = logging.getLogger(__name__)


@dataclass
class _TopicView:
    topic_id: uuid.UUID | None
    partitions: set[int] = field(default_factory=set)


class ChangeFeed:
    """Watches the cluster's znodes and queues a change on ``delivery`` for each difference it sees.

    ``lock`` is the store's commit lock: the feed holds it while it reads and
    compares, and the record methods (``broker_registered`` ...) must be called
    with it held.
    """

    def __init__(
        self, session: ZkSession, lock: threading.Lock, delivery: ChangeDelivery, *, clock_ms: Callable[[], int]
    ) -> None:
        self._session = session
        self._lock = lock
        self._delivery = delivery
        self._clock_ms = clock_ms
        self._brokers: set[int] = set()
        self._topics: dict[str, _TopicView] = {}
        self._states: dict[tuple[str, int], int] = {}
        self._config_changes: dict[str, int] = {}  # notification name -> creation time (ms)
        self._armed: set[str] = set()  # paths whose watch is set and has not fired
        self._events = EventThread("zk-metadata-changes")
        self._disconnected = False
        self._stopped = False
        self._remove_listener: Callable[[], None] | None = None

    def start(self) -> None:
        """Read everything and set the watches; nothing is reported for what already exists."""
        with self._lock:
            self._sync_all(emit=False)
        self._remove_listener = self._session.add_listener(self._on_session_event)

    def stop(self) -> None:
        self._stopped = True
        if self._remove_listener is not None:
            self._remove_listener()
        self._events.stop()

    # --- the store's own writes (call with the lock held) --------------------------------

    def broker_registered(self, broker_id: int) -> None:
        self._brokers.add(broker_id)

    def broker_unregistered(self, broker_id: int) -> None:
        self._brokers.discard(broker_id)

    def topic_created(self, name: str, topic_id: uuid.UUID, partitions: Iterable[int]) -> None:
        self._topics[name] = _TopicView(topic_id)
        self.partitions_added(name, partitions)

    def topic_deleted(self, name: str) -> None:
        self._forget_topic(name, emit=False)

    def partitions_added(self, name: str, partitions: Iterable[int]) -> None:
        view = self._topics.setdefault(name, _TopicView(None))
        for partition in partitions:
            view.partitions.add(partition)
            self._states[(name, partition)] = 0

    def state_written(self, topic: str, partition: int, version: int) -> None:
        self._states[(topic, partition)] = version

    def config_change_written(self, node_name: str) -> None:
        self._config_changes[node_name] = self._clock_ms()

    # --- watches ---------------------------------------------------------------------

    def _watch(self, event: WatchedEvent) -> None:
        # On kazoo's callback thread: only hand over. NONE events say the connection dropped;
        # the session listener below re-reads everything once it is back.
        if self._stopped or event.type == EventType.NONE or event.path is None:
            return
        self._events.submit(self._process, event.path)

    def _on_session_event(self, event: SessionEvent) -> None:
        if event.state is SessionState.CONNECTED:
            if self._disconnected:
                self._disconnected = False
                self._events.submit(self._resync)
        else:
            self._disconnected = True

    def _process(self, path: str) -> None:
        self._run_locked(lambda: self._sync_path(path), path)

    def _resync(self) -> None:
        self._run_locked(lambda: self._sync_all(emit=True, rearm=True), "everything")

    def _run_locked(self, sync: Callable[[], None], what: str) -> None:
        if self._stopped:
            return
        with self._lock:
            try:
                sync()
            except (ZooKeeperUnavailableError, KazooException) as exc:
                # The watch is not set again; the re-read after reconnecting covers it.
                logger.warning("cannot re-read %s after a ZooKeeper change: %s", what, exc)
        self._delivery.deliver()

    def _sync_path(self, path: str) -> None:
        self._armed.discard(path)
        parts = path.strip("/").split("/")
        if path == BrokerIdsZNode.path():
            self._sync_brokers(emit=True)
        elif path == TopicsZNode.path():
            self._sync_topics(emit=True)
        elif path == ConfigChangesZNode.path():
            self._sync_config_changes(emit=True)
        elif len(parts) == 3 and parts[:2] == ["brokers", "topics"]:
            self._sync_topic(parts[2], emit=True)
        elif _is_state_path(parts):
            self._sync_partition(parts[2], int(parts[4]), emit=True)

    # --- comparing ZooKeeper with the view (lock held) --------------------------------------

    def _sync_all(self, *, emit: bool, rearm: bool = False) -> None:
        if rearm:
            self._armed.clear()
        self._sync_brokers(emit=emit)
        self._sync_topics(emit=emit)
        self._sync_config_changes(emit=emit)

    def _sync_brokers(self, *, emit: bool) -> None:
        names = self._session.get_children(BrokerIdsZNode.path(), watch=self._watch)
        ids = {int(name) for name in names if name.isdigit()}
        if emit:
            for broker_id in sorted(self._brokers - ids):
                self._emit(MetadataChange(ChangeKind.BROKER_UNREGISTERED, broker_id=broker_id))
            for broker_id in sorted(ids - self._brokers):
                self._emit(MetadataChange(ChangeKind.BROKER_REGISTERED, broker_id=broker_id))
        self._brokers = ids

    def _sync_topics(self, *, emit: bool) -> None:
        names = set(self._session.get_children(TopicsZNode.path(), watch=self._watch))
        for name in sorted(set(self._topics) - names):
            self._forget_topic(name, emit=emit)
        for name in sorted(names):
            if name not in self._topics or TopicZNode.path(name) not in self._armed:
                self._sync_topic(name, emit=emit)

    def _sync_topic(self, name: str, *, emit: bool) -> None:
        path = TopicZNode.path(name)
        try:
            data, _ = self._session.get(path, watch=self._watch)
        except NoNodeError:
            self._forget_topic(name, emit=emit)
            return
        self._armed.add(path)
        try:
            assignment = TopicZNode.decode(name, data)
        except ZNodeDecodeError as exc:
            logger.error("ignoring a change of topic %r: %s", name, exc)
            return
        known = self._topics.get(name)
        if known is not None and assignment.topic_id is not None and known.topic_id not in (None, assignment.topic_id):
            self._forget_topic(name, emit=emit)  # deleted and created again in between
            known = None
        partitions = set(assignment.partitions)
        if known is None:
            self._topics[name] = _TopicView(assignment.topic_id, partitions)
            for partition in sorted(partitions):
                self._sync_partition(name, partition, emit=False)
            if emit:
                self._emit(MetadataChange(ChangeKind.TOPIC_CREATED, topic=name, partitions=tuple(sorted(partitions))))
            return
        known.topic_id = known.topic_id or assignment.topic_id
        added = partitions - known.partitions
        known.partitions |= partitions
        for partition in sorted(partitions):
            if partition in added or TopicPartitionStateZNode.path(name, partition) not in self._armed:
                self._sync_partition(name, partition, emit=emit and partition not in added)
        if emit and added:
            self._emit(MetadataChange(ChangeKind.PARTITIONS_ADDED, topic=name, partitions=tuple(sorted(added))))

    def _sync_partition(self, topic: str, partition: int, *, emit: bool) -> None:
        if topic not in self._topics:
            return
        path = TopicPartitionStateZNode.path(topic, partition)
        try:
            _, stat = self._session.get(path, watch=self._watch)
        except NoNodeError:
            # No state yet (a topic created by Kafka's tools before its first leader election): watch for it.
            if self._session.exists(path, watch=self._watch) is None:
                self._armed.add(path)
                return
            _, stat = self._session.get(path, watch=self._watch)
        self._armed.add(path)
        known = self._states.get((topic, partition))
        self._states[(topic, partition)] = stat.version
        if emit and known != stat.version:
            self._emit(MetadataChange(ChangeKind.PARTITION_STATE_CHANGED, topic=topic, partitions=(partition,)))

    def _sync_config_changes(self, *, emit: bool) -> None:
        names = self._session.get_children(ConfigChangesZNode.path(), watch=self._watch)
        present = set(names)
        for gone in set(self._config_changes) - present:
            del self._config_changes[gone]
        for name in sorted(present - set(self._config_changes)):
            try:
                data, stat = self._session.get(ConfigChangeNotificationZNode.path(name))
            except NoNodeError:
                continue
            self._config_changes[name] = stat.ctime
            if not emit:
                continue
            try:
                entity_type, entity = ConfigChangeNotificationZNode.decode(name, data)
            except ZNodeDecodeError as exc:
                logger.error("ignoring a config change notification: %s", exc)
                continue
            if entity_type == TOPIC:
                self._emit(MetadataChange(ChangeKind.TOPIC_CONFIG_CHANGED, topic=entity))
        self._purge_expired_config_changes()

    def _purge_expired_config_changes(self) -> None:
        horizon = self._clock_ms() - CONFIG_CHANGE_EXPIRATION_MS
        for name, created in sorted(self._config_changes.items()):
            if created < horizon:
                try:
                    self._session.delete(ConfigChangeNotificationZNode.path(name))
                except NoNodeError:
                    pass  # another broker purged it first
                del self._config_changes[name]

    def _forget_topic(self, name: str, *, emit: bool) -> None:
        view = self._topics.pop(name, None)
        if view is None:
            return
        for partition in view.partitions:
            self._states.pop((name, partition), None)
        prefix = TopicZNode.path(name)
        self._armed = {path for path in self._armed if path != prefix and not path.startswith(prefix + "/")}
        if emit:
            self._emit(MetadataChange(ChangeKind.TOPIC_DELETED, topic=name, partitions=tuple(sorted(view.partitions))))

    def _emit(self, change: MetadataChange) -> None:
        self._delivery.queue(change)


def _is_state_path(parts: list[str]) -> bool:
    """``brokers/topics/<t>/partitions/<p>/state``, split on '/'."""
    return (
        len(parts) == 6
        and parts[:2] == ["brokers", "topics"]
        and parts[3] == "partitions"
        and parts[4].isdigit()
        and parts[5] == "state"
    )
