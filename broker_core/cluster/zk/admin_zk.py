"""What an admin request writes to ZooKeeper (Kafka's ``AdminZkClient``).

Any broker handling a client's admin request writes only these znodes, in
Kafka's layout and JSON; the controller sees them and does the rest:

* CreateTopics: ``/config/topics/<t>`` and ``/brokers/topics/<t>``
  (assignment and topic id) in one transaction, and **no** partition state:
  the controller elects the first leaders and writes the state znodes;
* CreatePartitions: the grown assignment in ``/brokers/topics/<t>``,
  conditional on the version read;
* DeleteTopics: ``/admin/delete_topics/<t>``;
* AlterConfigs / IncrementalAlterConfigs: ``/config/topics/<t>`` and a
  sequential ``/config/changes/config_change_<seq>`` that every broker watches;
* ElectLeaders (preferred): ``/admin/preferred_replica_election``;
* AlterPartitionReassignments: ``/admin/reassign_partitions``, merged with
  what is there and written conditionally on its version.

Every call blocks on ZooKeeper: brokers run them on a worker thread, never
on their event loop. Reads of malformed znodes raise
:class:`~broker_core.cluster.zk.errors.ZNodeDecodeError` naming the path.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError, RolledBackError

from broker_core.cluster.errors import InvalidTopicNameError, MetadataError, TopicExistsError, UnknownTopicError
from broker_core.cluster.topic_names import find_collision, validate_topic_name
from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.errors import ZNodeDecodeError
from broker_core.cluster.zk.topic_znodes import TopicZNodes
from broker_core.cluster.zk.znodes.admin import (
    DeleteTopicZNode,
    PreferredReplicaElectionZNode,
    ReassignPartitionsZNode,
)
from broker_core.cluster.zk.znodes.configs import TOPIC, ConfigEntityTypeZNode, TopicConfigZNode
from broker_core.cluster.zk.znodes.topics import TopicAssignment, TopicsZNode, TopicZNode
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

# Rounds lost to a concurrent writer of the same znode before giving up.
MAX_CONFLICTS = 5
# Kafka reserves these two topic ids (the zero id and the metadata topic's).
_RESERVED_TOPIC_IDS = frozenset({uuid.UUID(int=0), uuid.UUID(int=1)})


class TopicMarkedForDeletionError(TopicExistsError):
    """The name belongs to a topic whose deletion is still under way (TOPIC_ALREADY_EXISTS, as Kafka)."""

    def __init__(self, topic: str) -> None:
        MetadataError.__init__(self, f"topic {topic!r} is marked for deletion")
        self.topic = topic


class ConcurrentUpdateError(MetadataError):
    """A znode changed between the read and the conditional write; read again and redo."""


class AdminOperationInProgressError(MetadataError):
    """An earlier request of the same kind is still waiting for the controller (its znode exists)."""


@dataclass(frozen=True)
class StoredAssignment:
    """A topic znode as read, with its data version (what a conditional write names)."""

    assignment: TopicAssignment
    version: int


class AdminZkClient:
    """The admin-side reads and writes, over one session. Blocking; thread-safe as the session is."""

    def __init__(self, session: ZkSession, *, id_source: Any = uuid.uuid4) -> None:
        self._session = session
        self._topics = TopicZNodes(session)
        self._id_source = id_source

    # --- topics: reads -------------------------------------------------------------------

    def topic_names(self) -> list[str]:
        return sorted(self._session.get_children(TopicsZNode.path()))

    def topic_exists(self, name: str) -> bool:
        return self._session.exists(TopicZNode.path(name)) is not None

    def is_marked_for_deletion(self, name: str) -> bool:
        return self._session.exists(DeleteTopicZNode.path(name)) is not None

    def read_assignment(self, name: str) -> StoredAssignment:
        """The topic's znode; :class:`UnknownTopicError` if absent, ZNodeDecodeError if malformed."""
        try:
            data, stat = self._session.get(TopicZNode.path(name))
        except NoNodeError:
            raise UnknownTopicError(name) from None
        return StoredAssignment(TopicZNode.decode(name, data), stat.version)

    def read_assignments(self, names: Iterable[str]) -> dict[str, TopicAssignment]:
        """The assignments of the named topics that exist; a malformed one is logged and left out."""
        wanted = sorted(set(names))
        found = self._session.get_many([TopicZNode.path(name) for name in wanted])
        result: dict[str, TopicAssignment] = {}
        for name in wanted:
            entry = found[TopicZNode.path(name)]
            if entry is None:
                continue
            try:
                result[name] = TopicZNode.decode(name, entry[0])
            except ZNodeDecodeError as exc:
                logger.error("skipping topic %r: %s", name, exc)
        return result

    def read_topic_configs(self, name: str) -> dict[str, str]:
        """The topic's overrides; {} when it has none. ZNodeDecodeError when the znode is malformed."""
        return self._topics.read_configs(name)

    def read_all_topic_configs(self) -> dict[str, dict[str, str]]:
        """Every topic's overrides; a malformed config znode is logged and read as no overrides."""
        names = sorted(self._session.get_children(ConfigEntityTypeZNode.path(TOPIC)))
        found = self._session.get_many([TopicConfigZNode.path(name) for name in names])
        configs: dict[str, dict[str, str]] = {}
        for name in names:
            entry = found[TopicConfigZNode.path(name)]
            if entry is None:
                continue
            try:
                configs[name] = TopicConfigZNode.decode(name, entry[0])
            except ZNodeDecodeError as exc:
                logger.error("ignoring the config overrides of topic %r: %s", name, exc)
        return configs

    # --- topics: writes ------------------------------------------------------------------

    def validate_topic_create(self, name: str) -> None:
        """Kafka's checks before a creation: a legal name, not taken, not being deleted, no collision."""
        validate_topic_name(name)
        if self.is_marked_for_deletion(name):
            raise TopicMarkedForDeletionError(name)
        if self.topic_exists(name):
            raise TopicExistsError(name)
        other = find_collision(name, self.topic_names())
        if other is not None:
            raise InvalidTopicNameError(f"topic {name!r} collides with existing topic {other!r}")

    def create_topic(
        self, name: str, assignment: Mapping[int, Sequence[int]], configs: Mapping[str, str]
    ) -> uuid.UUID:
        """Write the topic's configs and assignment (with a new topic id) in one transaction.

        :class:`TopicExistsError` if the topic znode exists. The caller has
        validated the assignment and the configs.
        """
        topic_id = self._new_topic_id()
        replicas = {partition: tuple(brokers) for partition, brokers in assignment.items()}
        topic_data = TopicZNode.encode(TopicAssignment(topic_id, replicas))
        config_data = TopicConfigZNode.encode(dict(configs))
        topic_path = TopicZNode.path(name)

        def attempt(retrying: bool) -> None:
            if retrying and self._holds(topic_path, topic_data):
                return  # the lost try landed
            for _ in range(MAX_CONFLICTS):
                transaction = self._session.transaction()
                config_path = TopicConfigZNode.path(name)
                # Configs left by a creation that failed half-way (by Kafka's two-step write) are replaced.
                if self._session.exists(config_path) is None:
                    transaction.create(config_path, config_data)
                else:
                    transaction.set_data(config_path, config_data)
                transaction.create(topic_path, topic_data)
                failed = _failure(self._session.commit(transaction))
                if failed is None:
                    return
                index, error = failed
                if index == 1 and isinstance(error, NodeExistsError):
                    raise TopicExistsError(name)
                if index == 0 and isinstance(error, (NodeExistsError, NoNodeError)):
                    continue  # another creator wrote or removed the configs since we looked: look again
                raise MetadataError(f"creating topic {name!r} failed in ZooKeeper: {type(error).__name__}")
            raise ConcurrentUpdateError(f"the config znode of {name!r} kept changing while creating the topic")

        self._session.retry_write(attempt)
        return topic_id

    def write_assignment(self, name: str, assignment: TopicAssignment, expected_version: int) -> None:
        """Replace the topic's assignment if its znode is still at ``expected_version``."""
        path = TopicZNode.path(name)
        data = TopicZNode.encode(assignment)

        def attempt(retrying: bool) -> None:
            if retrying and self._holds(path, data):
                return
            try:
                self._session.set(path, data, version=expected_version)
            except NoNodeError:
                raise UnknownTopicError(name) from None
            except BadVersionError:
                raise ConcurrentUpdateError(f"topic {name!r} changed while it was being written") from None

        self._session.retry_write(attempt)

    def delete_topic(self, name: str) -> bool:
        """Ask the controller to delete the topic; False when it was asked already.

        :class:`UnknownTopicError` if the topic does not exist.
        """
        if not self.topic_exists(name):
            raise UnknownTopicError(name)

        def attempt(retrying: bool) -> bool:
            try:
                self._session.create(DeleteTopicZNode.path(name), DeleteTopicZNode.encode())
            except NodeExistsError:
                return retrying  # our lost try, or an earlier request
            return True

        return self._session.retry_write(attempt)

    def change_topic_config(self, name: str, configs: Mapping[str, str]) -> None:
        """Replace the topic's overrides and leave a change notification; UnknownTopicError if absent."""
        self._topics.write_configs(name, dict(configs))

    # --- leadership and reassignment -----------------------------------------------------

    def elect_preferred_replicas(self, partitions: Iterable[TopicPartition]) -> None:
        """Ask the controller to hand the partitions back to their preferred replicas.

        :class:`AdminOperationInProgressError` while an earlier election's znode exists.
        """
        data = PreferredReplicaElectionZNode.encode(partitions)
        path = PreferredReplicaElectionZNode.path()

        def attempt(retrying: bool) -> None:
            try:
                self._session.create(path, data)
            except NodeExistsError:
                if retrying and self._holds(path, data):
                    return
                raise AdminOperationInProgressError("a preferred replica election is still in progress") from None

        self._session.retry_write(attempt)

    def read_pending_reassignments(self) -> tuple[dict[TopicPartition, tuple[int, ...]], int | None]:
        """``/admin/reassign_partitions`` and its data version; ({}, None) when absent."""
        try:
            data, stat = self._session.get(ReassignPartitionsZNode.path())
        except NoNodeError:
            return {}, None
        return ReassignPartitionsZNode.decode(data), stat.version

    def write_pending_reassignments(
        self, reassignments: Mapping[TopicPartition, Sequence[int]], expected_version: int | None
    ) -> None:
        """Replace ``/admin/reassign_partitions`` (create it when ``expected_version`` is None; delete it
        when nothing is left), conditional on the version read."""
        path = ReassignPartitionsZNode.path()
        data = ReassignPartitionsZNode.encode(reassignments) if reassignments else b""

        def attempt(retrying: bool) -> None:
            if retrying and (self._holds(path, data) if reassignments else self._session.exists(path) is None):
                return
            try:
                if expected_version is None:
                    if reassignments:
                        self._session.create(path, data)
                elif reassignments:
                    self._session.set(path, data, version=expected_version)
                else:
                    self._session.delete(path, version=expected_version)
            except (NodeExistsError, NoNodeError, BadVersionError):
                raise ConcurrentUpdateError("/admin/reassign_partitions changed while it was being written") from None

        self._session.retry_write(attempt)

    # --- internals -----------------------------------------------------------------------

    def _new_topic_id(self) -> uuid.UUID:
        while True:
            candidate = self._id_source()
            if candidate not in _RESERVED_TOPIC_IDS:
                return candidate

    def _holds(self, path: str, data: bytes) -> bool:
        try:
            current, _ = self._session.get(path)
        except NoNodeError:
            return False
        return current == data


def _failure(results: list[Any]) -> tuple[int, Exception] | None:
    """The index and error of the operation that made a transaction fail, or None if it committed."""
    for index, result in enumerate(results):
        if isinstance(result, Exception) and not isinstance(result, RolledBackError):
            return index, result
    return None
