"""A topic's znodes read and written as one unit.

A topic is several znodes: its assignment (``/brokers/topics/<t>``), the
``partitions`` parent, one ``partitions/<p>`` and ``partitions/<p>/state`` per
partition, and its config overrides (``/config/topics/<t>``). Creating,
deleting or growing a topic changes several of them, so each of those is one
ZooKeeper transaction: all of it happens or none of it does. Writes that
depend on what was read are conditional on the data version read
(:class:`TopicChanged` when someone else wrote first; re-read and redo).

A partition state version is the state znode's data version. A partition
whose state znode does not exist yet (a topic created by Kafka's tools before
its first leader election) reads as leaderless with version
:data:`NO_STATE_VERSION`; writing that version creates the znode.

ZooKeeper limits a request to about 1 MB, which bounds one topic creation to
a few thousand partitions.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError, NotEmptyError, RolledBackError

from broker_core.cluster.errors import (
    MetadataError,
    StaleVersionError,
    TopicExistsError,
    UnknownPartitionError,
    UnknownTopicError,
)
from broker_core.cluster.metadata_store import NO_LEADER, PartitionState, TopicDescription
from broker_core.cluster.zk.client import ZkSession
from broker_core.cluster.zk.topic_id_assignment import with_topic_id
from broker_core.cluster.zk.znodes.admin import DeleteTopicZNode
from broker_core.cluster.zk.znodes.configs import TOPIC, ConfigChangeNotificationZNode, TopicConfigZNode
from broker_core.cluster.zk.znodes.topics import (
    LeaderIsrAndControllerEpoch,
    TopicAssignment,
    TopicPartitionStateZNode,
    TopicPartitionsZNode,
    TopicPartitionZNode,
    TopicsZNode,
    TopicZNode,
)

NO_STATE_VERSION = -1


class TopicChanged(Exception):
    """The topic changed between the read and the conditional write; re-read and try again."""


@dataclass(frozen=True)
class StoredTopic:
    """A topic as read, with the data version of its assignment znode."""

    description: TopicDescription
    assignment: TopicAssignment
    version: int


class TopicZNodes:
    """Reads and transactional writes of topics over one session."""

    def __init__(self, session: ZkSession) -> None:
        self._session = session

    # --- reads ------------------------------------------------------------------------

    def names(self) -> list[str]:
        return sorted(self._session.get_children(TopicsZNode.path()))

    def topic_ids(self, names: list[str]) -> set[uuid.UUID]:
        found = self._session.get_many([TopicZNode.path(name) for name in names])
        ids = set()
        for name in names:
            entry = found[TopicZNode.path(name)]
            if entry is not None:
                topic_id = TopicZNode.decode(name, entry[0]).topic_id
                if topic_id is not None:
                    ids.add(topic_id)
        return ids

    def exists(self, name: str) -> bool:
        return self._session.exists(TopicZNode.path(name)) is not None

    def read(self, name: str) -> StoredTopic:
        try:
            data, stat = self._session.get(TopicZNode.path(name))
        except NoNodeError:
            raise UnknownTopicError(name) from None
        assignment, version = with_topic_id(self._session, name, TopicZNode.decode(name, data), stat.version)
        if assignment.topic_id is None:  # with_topic_id never returns one without an id
            raise MetadataError(f"topic {name!r} has no topic id")
        state_paths = {p: TopicPartitionStateZNode.path(name, p) for p in assignment.partitions}
        states = self._session.get_many(list(state_paths.values()))
        partitions = {
            partition: _partition_state(name, partition, replicas, states[state_paths[partition]])
            for partition, replicas in assignment.partitions.items()
        }
        description = TopicDescription(name, assignment.topic_id, partitions, self.read_configs(name))
        return StoredTopic(description, assignment, version)

    def read_configs(self, name: str) -> dict[str, str]:
        try:
            data, _ = self._session.get(TopicConfigZNode.path(name))
        except NoNodeError:
            return {}
        return TopicConfigZNode.decode(name, data)

    # --- writes -----------------------------------------------------------------------

    def create(self, topic: TopicDescription) -> None:
        """Create every znode of a new topic in one transaction; :class:`TopicExistsError` if taken."""
        name = topic.name
        assignment = TopicAssignment(topic.topic_id, topic.assignment())
        topic_data = TopicZNode.encode(assignment)

        def attempt(retrying: bool) -> None:
            if retrying and self._holds(TopicZNode.path(name), topic_data):
                return  # the lost try created it
            transaction = self._session.transaction()
            transaction.create(TopicZNode.path(name), topic_data)
            transaction.create(TopicPartitionsZNode.path(name), b"")
            self._add_partition_ops(transaction, name, topic.partitions)
            self._set_configs_op(transaction, name, topic.configs)
            failed = _failure(self._session.commit(transaction))
            if failed is not None:
                index, error = failed
                if index == 0 and isinstance(error, NodeExistsError):
                    raise TopicExistsError(name)
                raise MetadataError(f"creating topic {name!r} failed in ZooKeeper: {_describe(error)}")

        self._session.retry_write(attempt)

    def delete(self, stored: StoredTopic) -> None:
        """Delete every znode of the topic in one transaction, if its assignment is still as read."""
        name = stored.description.name

        def attempt(retrying: bool) -> None:
            transaction = self._session.transaction()
            for path, version in self._deletions(name, stored.version):
                transaction.delete(path, version=version)
            failed = _failure(self._session.commit(transaction))
            if failed is None:
                return
            _, error = failed
            if isinstance(error, NoNodeError) and not self.exists(name):
                if retrying:
                    return  # the lost try deleted it
                raise UnknownTopicError(name)
            if isinstance(error, (BadVersionError, NotEmptyError, NoNodeError)):
                raise TopicChanged(name)
            raise MetadataError(f"deleting topic {name!r} failed in ZooKeeper: {_describe(error)}")

        self._session.retry_write(attempt)

    def add_partitions(self, stored: StoredTopic, new: dict[int, PartitionState]) -> None:
        """Extend the assignment and create the new partitions, if the assignment is still as read."""
        name = stored.description.name
        partitions = {**stored.assignment.partitions, **{p: state.replicas for p, state in new.items()}}
        assignment = TopicAssignment(
            stored.assignment.topic_id, partitions, stored.assignment.adding_replicas, stored.assignment.removing_replicas
        )
        topic_data = TopicZNode.encode(assignment)

        def attempt(retrying: bool) -> None:
            if retrying and self._holds(TopicZNode.path(name), topic_data):
                return
            transaction = self._session.transaction()
            transaction.set_data(TopicZNode.path(name), topic_data, version=stored.version)
            self._add_partition_ops(transaction, name, new)
            failed = _failure(self._session.commit(transaction))
            if failed is None:
                return
            index, error = failed
            if index == 0 and isinstance(error, NoNodeError):
                raise UnknownTopicError(name)
            if index == 0 and isinstance(error, BadVersionError):
                raise TopicChanged(name)
            raise MetadataError(f"adding partitions to {name!r} failed in ZooKeeper: {_describe(error)}")

        self._session.retry_write(attempt)

    def write_state(self, stored: StoredTopic, partition: int, state: PartitionState, expected_version: int) -> None:
        """Write one partition's state, conditional on its version (and, if replicas change, the topic's)."""
        name = stored.description.name
        path = TopicPartitionStateZNode.path(name, partition)
        data = TopicPartitionStateZNode.encode(
            LeaderIsrAndControllerEpoch(state.leader, state.leader_epoch, tuple(state.isr), state.controller_epoch)
        )
        replicas = tuple(state.replicas)
        reassigned = replicas != stored.description.partitions[partition].replicas

        def attempt(retrying: bool) -> None:
            if retrying and self._holds(path, data, version=expected_version + 1):
                return
            transaction = self._session.transaction()
            if expected_version == NO_STATE_VERSION:
                for parent in (TopicPartitionsZNode.path(name), TopicPartitionZNode.path(name, partition)):
                    if self._session.exists(parent) is None:
                        transaction.create(parent, b"")
                transaction.create(path, data)
            else:
                transaction.set_data(path, data, version=expected_version)
            if reassigned:
                partitions = {**stored.assignment.partitions, partition: replicas}
                assignment = TopicAssignment(stored.assignment.topic_id, partitions)
                transaction.set_data(TopicZNode.path(name), TopicZNode.encode(assignment), version=stored.version)
            results = self._session.commit(transaction)
            failed = _failure(results)
            if failed is None:
                return
            index, error = failed
            if reassigned and index == len(results) - 1:
                raise UnknownTopicError(name) if isinstance(error, NoNodeError) else TopicChanged(name)
            if isinstance(error, (BadVersionError, NodeExistsError)):
                stat = self._session.exists(path)
                actual = stat.version if stat is not None else NO_STATE_VERSION
                raise StaleVersionError(f"partition {name}-{partition}", expected_version, actual)
            if isinstance(error, NoNodeError):
                raise UnknownPartitionError(name, partition)
            raise MetadataError(f"writing the state of {name}-{partition} failed in ZooKeeper: {_describe(error)}")

        self._session.retry_write(attempt)

    def write_configs(self, name: str, configs: dict[str, str]) -> str:
        """Replace the topic's overrides and leave a change notification; returns the notification's name."""

        def attempt(retrying: bool) -> str:
            transaction = self._session.transaction()
            transaction.check(TopicZNode.path(name), -1)
            self._set_configs_op(transaction, name, configs)
            transaction.create(
                ConfigChangeNotificationZNode.create_path(),
                ConfigChangeNotificationZNode.encode(TOPIC, name),
                sequence=True,
            )
            results = self._session.commit(transaction)
            failed = _failure(results)
            if failed is not None:
                index, error = failed
                if index == 0 and isinstance(error, NoNodeError):
                    raise UnknownTopicError(name)
                raise MetadataError(f"writing the configs of {name!r} failed in ZooKeeper: {_describe(error)}")
            return str(results[-1]).rsplit("/", 1)[-1]

        return self._session.retry_write(attempt)

    # --- transaction pieces -----------------------------------------------------------

    def _add_partition_ops(self, transaction: Any, name: str, partitions: Any) -> None:
        for partition, state in sorted(partitions.items()):
            transaction.create(TopicPartitionZNode.path(name, partition), b"")
            transaction.create(
                TopicPartitionStateZNode.path(name, partition),
                TopicPartitionStateZNode.encode(
                    LeaderIsrAndControllerEpoch(state.leader, state.leader_epoch, tuple(state.isr), state.controller_epoch)
                ),
            )

    def _set_configs_op(self, transaction: Any, name: str, configs: Any) -> None:
        path = TopicConfigZNode.path(name)
        data = TopicConfigZNode.encode(dict(configs))
        if self._session.exists(path) is None:
            transaction.create(path, data)
        else:
            transaction.set_data(path, data)

    def _deletions(self, name: str, topic_version: int) -> list[tuple[str, int]]:
        """(path, version) to delete, children first: states, partitions, the parent, the topic, its configs."""
        deletions: list[tuple[str, int]] = []
        partitions_path = TopicPartitionsZNode.path(name)
        try:
            partition_names = self._session.get_children(partitions_path)
        except NoNodeError:
            partition_names = None
        for partition_name in sorted(partition_names or []):
            partition_path = f"{partitions_path}/{partition_name}"
            deletions.extend((f"{partition_path}/{child}", -1) for child in self._session.get_children(partition_path))
            deletions.append((partition_path, -1))
        if partition_names is not None:
            deletions.append((partitions_path, -1))
        deletions.append((TopicZNode.path(name), topic_version))
        for extra in (TopicConfigZNode.path(name), DeleteTopicZNode.path(name)):
            if self._session.exists(extra) is not None:
                deletions.append((extra, -1))
        return deletions

    def _holds(self, path: str, data: bytes, *, version: int | None = None) -> bool:
        """True if ``path`` holds ``data`` (at ``version``): a lost write of it landed."""
        try:
            current, stat = self._session.get(path)
        except NoNodeError:
            return False
        return current == data and (version is None or stat.version == version)


def _partition_state(topic: str, partition: int, replicas: tuple[int, ...], entry: Any) -> PartitionState:
    if entry is None:
        return PartitionState(NO_LEADER, 0, (), replicas, 0, version=NO_STATE_VERSION)
    data, stat = entry
    state = TopicPartitionStateZNode.decode(topic, partition, data)
    return PartitionState(state.leader, state.leader_epoch, state.isr, replicas, state.controller_epoch, stat.version)


def _failure(results: list[Any]) -> tuple[int, Exception] | None:
    """The index and error of the operation that made a transaction fail, or None if it committed."""
    for index, result in enumerate(results):
        if isinstance(result, Exception) and not isinstance(result, RolledBackError):
            return index, result
    return None


def _describe(error: Exception) -> str:
    return type(error).__name__
