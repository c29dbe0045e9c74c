"""The controller's reads and writes of ZooKeeper (the controller half of Kafka's KafkaZkClient).

Reads take an optional one-shot watch: ZooKeeper fires it once, on the next
change, and the controller reads again (setting a new watch) when it handles
the event, so no change between the two is missed.

Partition state writes are conditional on the state znode's data version and
fenced by the controller epoch (``Leadership.fence``): a controller that was
deposed meanwhile changes nothing. Several partitions go in one ZooKeeper
transaction; when it fails, each partition is written on its own to learn
which ones are stale, as Kafka's ``updateLeaderAndIsr`` reports failures per
partition.

Malformed znodes are reported (:class:`MalformedZNode`), never raised through
the controller: one bad topic must not stop the cluster.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError, NotEmptyError, RolledBackError

from broker_core.cluster.metadata_store import BrokerRegistration
from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.controller_election import Leadership
from broker_core.cluster.zk.errors import ZNodeDecodeError
from broker_core.cluster.zk.topic_id_assignment import with_topic_id
from broker_core.cluster.zk.znodes import (
    BrokerIdsZNode,
    BrokerIdZNode,
    ControllerEpochZNode,
    DeleteTopicsZNode,
    DeleteTopicZNode,
    IsrChangeNotificationsZNode,
    IsrChangeNotificationZNode,
    LeaderIsrAndControllerEpoch,
    LogDirEventNotificationsZNode,
    LogDirEventNotificationZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
    TopicAssignment,
    TopicConfigZNode,
    TopicPartitionStateZNode,
    TopicPartitionsZNode,
    TopicPartitionZNode,
    TopicsZNode,
    TopicZNode,
)
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

Watch = Callable[[Any], object]
NO_STATE_VERSION = -1
# Partition states written in one ZooKeeper transaction: at most ~1 KB each (a 249-character topic name).
STATES_PER_TRANSACTION = 200


@dataclass(frozen=True, slots=True)
class LiveBroker:
    # Every advertised endpoint; host and port are those of the inter-broker listener.
    registration: BrokerRegistration
    # The czxid of the registration znode: a broker's epoch, new with every registration.
    epoch: int


@dataclass(frozen=True, slots=True)
class StoredState:
    """A partition state znode as read: its content and data version."""

    state: LeaderIsrAndControllerEpoch
    zk_version: int


@dataclass(frozen=True, slots=True)
class MalformedZNode:
    path: str
    reason: str


class ControllerZk:
    def __init__(self, session: ZkSession, *, inter_broker_listener: str | None = None) -> None:
        self._session = session
        # Brokers are reached through this listener's endpoints (Kafka's inter.broker.listener.name).
        self._inter_broker_listener = inter_broker_listener

    # --- brokers -------------------------------------------------------------------------

    def live_brokers(self, watch: Watch | None = None) -> tuple[dict[int, LiveBroker], list[MalformedZNode]]:
        names = self._session.get_children(BrokerIdsZNode.path(), watch=watch)
        ids = sorted(int(name) for name in names if name.isdigit())
        found = self._session.get_many([BrokerIdZNode.path(i) for i in ids])
        brokers: dict[int, LiveBroker] = {}
        malformed: list[MalformedZNode] = []
        for broker_id in ids:
            entry = found[BrokerIdZNode.path(broker_id)]
            if entry is None:
                continue
            data, stat = entry
            try:
                info = BrokerIdZNode.decode(broker_id, data)
            except ZNodeDecodeError as exc:
                malformed.append(MalformedZNode(BrokerIdZNode.path(broker_id), str(exc)))
                continue
            registration = self._reached_through_inter_broker_listener(info.registration())
            brokers[broker_id] = LiveBroker(registration, stat.czxid)
        return brokers, malformed

    def _reached_through_inter_broker_listener(self, registration: BrokerRegistration) -> BrokerRegistration:
        """The registration with the address of its inter-broker endpoint; a broker without one keeps the
        address it registered first (logged: brokers configured with different listeners)."""
        listener = self._inter_broker_listener
        if listener is None:
            return registration
        reached = registration.through(listener)
        if reached is None:
            logger.warning(
                "controller: broker %d advertises no %s listener (%s); reaching it at %s:%d",
                registration.broker_id, listener, ",".join(e.connection_string() for e in registration.endpoints),
                registration.host, registration.port,
            )
            return registration
        return reached

    # --- topics --------------------------------------------------------------------------

    def topic_names(self, watch: Watch | None = None) -> list[str]:
        return sorted(self._session.get_children(TopicsZNode.path(), watch=watch))

    def topic_assignments(
        self, names: Iterable[str], watch: Callable[[str], Watch] | None = None
    ) -> tuple[dict[str, tuple[TopicAssignment, int]], list[MalformedZNode]]:
        """Each topic's assignment znode and its data version; ``watch(name)`` gives the watch per topic.

        A topic without a topic id is given one first (``topic_id_assignment``), as Kafka's controller does.
        """
        assignments: dict[str, tuple[TopicAssignment, int]] = {}
        malformed: list[MalformedZNode] = []
        for name in names:
            path = TopicZNode.path(name)
            try:
                data, stat = self._session.get(path, watch=watch(name) if watch else None)
            except NoNodeError:
                continue
            try:
                assignments[name] = with_topic_id(self._session, name, TopicZNode.decode(name, data), stat.version)
            except ZNodeDecodeError as exc:
                malformed.append(MalformedZNode(path, str(exc)))
        return assignments, malformed

    def partition_states(
        self, partitions: Iterable[TopicPartition]
    ) -> tuple[dict[TopicPartition, StoredState], list[MalformedZNode]]:
        """The state znodes that exist (absent: the partition was never given a leader)."""
        wanted = list(partitions)
        found = self._session.get_many([TopicPartitionStateZNode.path(tp.topic, tp.partition) for tp in wanted])
        states: dict[TopicPartition, StoredState] = {}
        malformed: list[MalformedZNode] = []
        for tp in wanted:
            path = TopicPartitionStateZNode.path(tp.topic, tp.partition)
            entry = found[path]
            if entry is None:
                continue
            data, stat = entry
            try:
                states[tp] = StoredState(TopicPartitionStateZNode.decode(tp.topic, tp.partition, data), stat.version)
            except ZNodeDecodeError as exc:
                malformed.append(MalformedZNode(path, str(exc)))
        return states, malformed

    def write_partition_states(
        self, states: Mapping[TopicPartition, tuple[LeaderIsrAndControllerEpoch, int]], leadership: Leadership
    ) -> tuple[dict[TopicPartition, int], dict[TopicPartition, Exception]]:
        """Write ``{tp: (state, expected_version)}``; a version of -1 creates the znode.

        Returns the new data versions of the written partitions and the error
        of each one that was not written. A stale controller gets every
        partition back as failed (:class:`ControllerMovedError`).
        """
        versions: dict[TopicPartition, int] = {}
        failures: dict[TopicPartition, Exception] = {}
        items = list(states.items())
        # One transaction per chunk: a single one for thousands of partitions would pass ZooKeeper's
        # jute.maxbuffer (1 MB), and ZooKeeper answers a request that large by dropping the session's connection.
        for start in range(0, len(items), STATES_PER_TRANSACTION):
            chunk = dict(items[start:start + STATES_PER_TRANSACTION])
            written = self._write_states(chunk, leadership)
            if written is not None:
                versions.update(written)
                continue
            if not self._still_controller(leadership):
                moved = ControllerMovedError(f"controller epoch {leadership.epoch} is no longer current")
                failures.update({tp: moved for tp, _ in items[start:]})
                break
            for tp, entry in chunk.items():
                one = self._write_states({tp: entry}, leadership)
                if one is None:
                    failures[tp] = StaleStateError(f"state of {tp} changed since it was read")
                else:
                    versions.update(one)
        return versions, failures

    def _write_states(
        self, states: Mapping[TopicPartition, tuple[LeaderIsrAndControllerEpoch, int]], leadership: Leadership
    ) -> dict[TopicPartition, int] | None:
        transaction = self._session.transaction()
        leadership.fence(transaction)
        missing = self._missing_parents([tp for tp, (_, expected) in states.items() if expected == NO_STATE_VERSION])
        for tp, (state, expected) in states.items():
            path = TopicPartitionStateZNode.path(tp.topic, tp.partition)
            data = TopicPartitionStateZNode.encode(state)
            if expected == NO_STATE_VERSION:
                for parent in (TopicPartitionsZNode.path(tp.topic), TopicPartitionZNode.path(tp.topic, tp.partition)):
                    if parent in missing:
                        transaction.create(parent, b"")
                        missing.remove(parent)
                transaction.create(path, data)
            else:
                transaction.set_data(path, data, version=expected)
        results = self._session.commit(transaction)
        if any(isinstance(r, Exception) and not isinstance(r, RolledBackError) for r in results):
            return None
        return {tp: 0 if expected == NO_STATE_VERSION else expected + 1 for tp, (_, expected) in states.items()}

    def _missing_parents(self, new: list[TopicPartition]) -> set[str]:
        """The znodes above new partitions' states that do not exist yet, looked up in one pipelined round."""
        parents = {TopicPartitionsZNode.path(tp.topic) for tp in new}
        parents.update(TopicPartitionZNode.path(tp.topic, tp.partition) for tp in new)
        return {path for path, found in self._session.get_many(sorted(parents)).items() if found is None}

    def _still_controller(self, leadership: Leadership) -> bool:
        stat = self._session.exists(ControllerEpochZNode.path())
        return stat is not None and stat.version == leadership.epoch_zk_version

    def set_topic_assignment(
        self, name: str, assignment: TopicAssignment, expected_version: int, leadership: Leadership
    ) -> int | None:
        """Rewrite a topic's assignment (end of a reassignment); the new version, or None when stale."""
        transaction = self._session.transaction()
        leadership.fence(transaction)
        transaction.set_data(TopicZNode.path(name), TopicZNode.encode(assignment), version=expected_version)
        results = self._session.commit(transaction)
        if any(isinstance(r, Exception) and not isinstance(r, RolledBackError) for r in results):
            return None
        return expected_version + 1

    # --- topic deletion ------------------------------------------------------------------

    def topics_to_delete(self, watch: Watch | None = None) -> list[str]:
        try:
            return sorted(self._session.get_children(DeleteTopicsZNode.path(), watch=watch))
        except NoNodeError:
            self._session.ensure_path(DeleteTopicsZNode.path())
            return sorted(self._session.get_children(DeleteTopicsZNode.path(), watch=watch))

    def remove_deletion_marker(self, name: str) -> None:
        self._delete_quietly(DeleteTopicZNode.path(name))

    def delete_topic(self, name: str) -> None:
        """Remove every znode of a deleted topic, children first, then its deletion marker."""
        paths: list[str] = []
        partitions_path = TopicPartitionsZNode.path(name)
        try:
            for partition in sorted(self._session.get_children(partitions_path)):
                partition_path = f"{partitions_path}/{partition}"
                paths.extend(f"{partition_path}/{child}" for child in self._session.get_children(partition_path))
                paths.append(partition_path)
            paths.append(partitions_path)
        except NoNodeError:
            pass
        paths += [TopicZNode.path(name), TopicConfigZNode.path(name), DeleteTopicZNode.path(name)]
        for path in paths:
            self._delete_quietly(path)

    def _delete_quietly(self, path: str) -> None:
        try:
            self._session.delete(path)
        except NoNodeError:
            pass
        except NotEmptyError:
            logger.warning("controller: %s still has children; left in place", path)

    # --- notifications and admin requests ------------------------------------------------

    def isr_change_notifications(
        self, watch: Watch | None = None
    ) -> tuple[list[tuple[str, frozenset[TopicPartition]]], list[MalformedZNode]]:
        return self._notifications(IsrChangeNotificationsZNode.path(), IsrChangeNotificationZNode, watch)

    def remove_isr_change_notifications(self, names: Iterable[str]) -> None:
        for name in names:
            self._delete_quietly(IsrChangeNotificationZNode.path(name))

    def log_dir_event_notifications(
        self, watch: Watch | None = None
    ) -> tuple[list[tuple[str, int]], list[MalformedZNode]]:
        """Each notification's name and the broker whose log dir failed."""
        return self._notifications(LogDirEventNotificationsZNode.path(), LogDirEventNotificationZNode, watch)

    def remove_log_dir_event_notifications(self, names: Iterable[str]) -> None:
        for name in names:
            self._delete_quietly(LogDirEventNotificationZNode.path(name))

    def _notifications(self, parent: str, znode: Any, watch: Watch | None) -> tuple[list[tuple[str, Any]],
                                                                                      list[MalformedZNode]]:
        """Every child of ``parent`` decoded by ``znode`` (a notification znode class), in sequence order."""
        try:
            names = sorted(self._session.get_children(parent, watch=watch))
        except NoNodeError:
            self._session.ensure_path(parent)
            names = sorted(self._session.get_children(parent, watch=watch))
        found = self._session.get_many([znode.path(n) for n in names])
        notifications = []
        malformed = []
        for name in names:
            entry = found[znode.path(name)]
            if entry is None:
                continue
            try:
                notifications.append((name, znode.decode(name, entry[0])))
            except ZNodeDecodeError as exc:
                malformed.append(MalformedZNode(znode.path(name), str(exc)))
        return notifications, malformed

    def reassignment_request(
        self, watch: Watch | None = None
    ) -> tuple[dict[TopicPartition, tuple[int, ...]], int, MalformedZNode | None]:
        """The pending ``/admin/reassign_partitions`` (empty when absent), its version, and a parse failure."""
        path = ReassignPartitionsZNode.path()
        stat = self._session.exists(path, watch=watch)
        if stat is None:
            return {}, NO_STATE_VERSION, None
        try:
            data, stat = self._session.get(path, watch=watch)
        except NoNodeError:
            return {}, NO_STATE_VERSION, None
        try:
            return ReassignPartitionsZNode.decode(data), stat.version, None
        except ZNodeDecodeError as exc:
            return {}, stat.version, MalformedZNode(path, str(exc))

    def set_reassignment_request(self, remaining: Mapping[TopicPartition, tuple[int, ...]], version: int) -> bool:
        """Rewrite (or remove, when empty) the reassignment znode; False when someone wrote it meanwhile."""
        path = ReassignPartitionsZNode.path()
        try:
            if not remaining:
                self._session.delete(path, version=version)
            else:
                self._session.set(path, ReassignPartitionsZNode.encode(remaining), version=version)
        except NoNodeError:
            return True
        except BadVersionError:
            return False
        return True

    def preferred_election_request(
        self, watch: Watch | None = None
    ) -> tuple[frozenset[TopicPartition], MalformedZNode | None]:
        path = PreferredReplicaElectionZNode.path()
        if self._session.exists(path, watch=watch) is None:
            return frozenset(), None
        try:
            data, _ = self._session.get(path, watch=watch)
        except NoNodeError:
            return frozenset(), None
        try:
            return PreferredReplicaElectionZNode.decode(data), None
        except ZNodeDecodeError as exc:
            return frozenset(), MalformedZNode(path, str(exc))

    def remove_preferred_election_request(self) -> None:
        self._delete_quietly(PreferredReplicaElectionZNode.path())

    def ensure_paths(self) -> None:
        for path in (DeleteTopicsZNode.path(), IsrChangeNotificationsZNode.path(), TopicsZNode.path()):
            try:
                self._session.ensure_path(path)
            except NodeExistsError:
                pass


class ControllerMovedError(Exception):
    """A newer controller was elected: this one's writes are fenced off."""


class StaleStateError(Exception):
    """A partition state changed since the controller read it (someone else wrote it)."""
