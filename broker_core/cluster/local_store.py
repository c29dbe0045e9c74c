"""The embedded, file-backed metadata store of a single-node deployment.

State lives in one JSON file (layout and crash behaviour in
:mod:`broker_core.cluster.local_store_file`) and in memory as an immutable
snapshot. A write validates against the current snapshot, builds the next one,
makes it durable, and only then makes it visible, so a failed write (full
disk, bad input) changes nothing.

Thread-safety: writes are serialised by a lock; reads see the latest
committed snapshot without blocking. Only one process may open a store: it
holds an exclusive ``flock`` on ``<file>.lock`` until :meth:`close`.
"""

from __future__ import annotations

import base64
import collections
import fcntl
import logging
import os
import threading
import uuid
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Mapping, Sequence

from broker_core.cluster.assignment import validate_assignment
from broker_core.cluster.errors import (
    BrokerAlreadyRegisteredError,
    InvalidPartitionsError,
    InvalidTopicNameError,
    MetadataError,
    MetadataStoreFileError,
    StaleVersionError,
    TopicExistsError,
    UnknownBrokerError,
    UnknownPartitionError,
    UnknownTopicError,
)
from broker_core.cluster.local_store_file import StoreState, read_state, temp_path, write_state
from broker_core.cluster.metadata_store import (
    DEFAULT_PRODUCER_ID_BLOCK_SIZE,
    BrokerRegistration,
    ChangeKind,
    ChangeListener,
    MetadataChange,
    PartitionState,
    ProducerIdBlock,
    TopicDescription,
    check_state_transition,
)
from broker_core.cluster.topic_names import collision_warning, find_collision, validate_topic_name

logger = logging.getLogger(__name__)

METADATA_FILE_NAME = "spate-metadata.json"
MAX_PRODUCER_ID = 2**63 - 1
# Kafka reserves these two topic ids (the zero id and the metadata topic's).
_RESERVED_TOPIC_IDS = frozenset({uuid.UUID(int=0), uuid.UUID(int=1)})


class LocalMetadataStore:
    """:class:`~broker_core.cluster.metadata_store.MetadataStore` kept in one local file.

    ``path`` is the JSON file; it and its parent directories are created on
    first open. ``id_source`` supplies UUIDs for the cluster id and topic ids.
    """

    def __init__(self, path: Path, *, id_source: Callable[[], uuid.UUID] = uuid.uuid4) -> None:
        self._path = Path(path)
        self._id_source = id_source
        self._lock = threading.Lock()
        self._closed = False
        self._brokers: Mapping[int, BrokerRegistration] = MappingProxyType({})
        self._listeners: list[ChangeListener] = []
        self._pending: collections.deque[MetadataChange] = collections.deque()
        self._delivering = threading.Lock()
        self._lock_fd = self._acquire_process_lock()
        try:
            self._state = self._open_state()
        except BaseException:
            self._release_process_lock()
            raise

    @classmethod
    def in_directory(
        cls, directory: Path, *, id_source: Callable[[], uuid.UUID] = uuid.uuid4
    ) -> LocalMetadataStore:
        """The store kept as :data:`METADATA_FILE_NAME` in ``directory``."""
        return cls(Path(directory) / METADATA_FILE_NAME, id_source=id_source)

    @property
    def path(self) -> Path:
        return self._path

    def close(self) -> None:
        """Release the file lock; later calls that write raise :class:`MetadataError`."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._release_process_lock()

    def __enter__(self) -> LocalMetadataStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- cluster identity -----------------------------------------------------

    def cluster_id(self) -> str:
        return self._state.cluster_id

    # --- brokers (in memory only: registrations die with the process) -------

    def register_broker(self, registration: BrokerRegistration) -> None:
        with self._lock:
            self._ensure_open()
            if registration.broker_id in self._brokers:
                raise BrokerAlreadyRegisteredError(registration.broker_id)
            brokers = dict(self._brokers)
            brokers[registration.broker_id] = registration
            self._brokers = MappingProxyType(brokers)
            self._pending.append(MetadataChange(ChangeKind.BROKER_REGISTERED, broker_id=registration.broker_id))
        self._deliver()

    def unregister_broker(self, broker_id: int) -> None:
        with self._lock:
            self._ensure_open()
            if broker_id not in self._brokers:
                raise UnknownBrokerError(broker_id)
            brokers = dict(self._brokers)
            del brokers[broker_id]
            self._brokers = MappingProxyType(brokers)
            self._pending.append(MetadataChange(ChangeKind.BROKER_UNREGISTERED, broker_id=broker_id))
        self._deliver()

    def list_brokers(self) -> list[BrokerRegistration]:
        return [self._brokers[broker_id] for broker_id in sorted(self._brokers)]

    # --- topics -----------------------------------------------------------------

    def create_topic(
        self,
        name: str,
        assignment: Mapping[int, Sequence[int]],
        configs: Mapping[str, str] | None = None,
        *,
        controller_epoch: int = 0,
    ) -> TopicDescription:
        validate_topic_name(name)
        validate_assignment(assignment)
        with self._lock:
            self._ensure_open()
            state = self._state
            if name in state.topics:
                raise TopicExistsError(name)
            other = find_collision(name, state.topics)
            if other is not None:
                raise InvalidTopicNameError(f"topic {name!r} collides with existing topic {other!r}")
            topic = TopicDescription(
                name=name,
                topic_id=self._new_topic_id(state),
                partitions={
                    partition: PartitionState.initial(replicas, controller_epoch)
                    for partition, replicas in assignment.items()
                },
                configs=dict(configs or {}),
            )
            self._commit(
                replace(state, topics={**state.topics, name: topic}),
                MetadataChange(ChangeKind.TOPIC_CREATED, topic=name, partitions=tuple(topic.partitions)),
            )
        warning = collision_warning(name)
        if warning is not None:
            logger.warning(warning)
        self._deliver()
        return topic

    def delete_topic(self, name: str) -> TopicDescription:
        with self._lock:
            self._ensure_open()
            state = self._state
            topic = self._topic(state, name)
            topics = {key: value for key, value in state.topics.items() if key != name}
            self._commit(
                replace(state, topics=topics),
                MetadataChange(ChangeKind.TOPIC_DELETED, topic=name, partitions=tuple(topic.partitions)),
            )
        self._deliver()
        return topic

    def list_topics(self) -> list[str]:
        return sorted(self._state.topics)

    def get_topic(self, name: str) -> TopicDescription:
        return self._topic(self._state, name)

    def add_partitions(self, name: str, assignment: Mapping[int, Sequence[int]]) -> TopicDescription:
        if not assignment:
            raise InvalidPartitionsError("no partitions to add")
        with self._lock:
            self._ensure_open()
            state = self._state
            topic = self._topic(state, name)
            validate_assignment(
                assignment, first_partition=topic.partition_count, replication_factor=topic.replication_factor
            )
            controller_epoch = max(s.controller_epoch for s in topic.partitions.values())
            partitions = dict(topic.partitions)
            for partition, replicas in assignment.items():
                partitions[partition] = PartitionState.initial(replicas, controller_epoch)
            updated = replace(topic, partitions=partitions)
            self._commit(
                replace(state, topics={**state.topics, name: updated}),
                MetadataChange(ChangeKind.PARTITIONS_ADDED, topic=name, partitions=tuple(sorted(assignment))),
            )
        self._deliver()
        return updated

    # --- partition state ----------------------------------------------------------

    def get_partition_state(self, topic: str, partition: int) -> PartitionState:
        description = self._topic(self._state, topic)
        state = description.partitions.get(partition)
        if state is None:
            raise UnknownPartitionError(topic, partition)
        return state

    def update_partition_state(
        self, topic: str, partition: int, state: PartitionState, *, expected_version: int
    ) -> PartitionState:
        with self._lock:
            self._ensure_open()
            snapshot = self._state
            description = self._topic(snapshot, topic)
            current = description.partitions.get(partition)
            if current is None:
                raise UnknownPartitionError(topic, partition)
            if current.version != expected_version:
                raise StaleVersionError(f"partition {topic}-{partition}", expected_version, current.version)
            check_state_transition(f"partition {topic}-{partition}", current, state)
            stored = replace(state, isr=tuple(state.isr), replicas=tuple(state.replicas), version=current.version + 1)
            partitions = {**description.partitions, partition: stored}
            updated = replace(description, partitions=partitions)
            self._commit(
                replace(snapshot, topics={**snapshot.topics, topic: updated}),
                MetadataChange(ChangeKind.PARTITION_STATE_CHANGED, topic=topic, partitions=(partition,)),
            )
        self._deliver()
        return stored

    # --- topic configs --------------------------------------------------------------

    def get_topic_configs(self, name: str) -> dict[str, str]:
        return dict(self._topic(self._state, name).configs)

    def set_topic_configs(self, name: str, configs: Mapping[str, str]) -> None:
        with self._lock:
            self._ensure_open()
            state = self._state
            topic = self._topic(state, name)
            updated = replace(topic, configs=dict(configs))
            self._commit(
                replace(state, topics={**state.topics, name: updated}),
                MetadataChange(ChangeKind.TOPIC_CONFIG_CHANGED, topic=name),
            )
        self._deliver()

    # --- producer ids ---------------------------------------------------------------

    def allocate_producer_id_block(
        self, broker_id: int, size: int = DEFAULT_PRODUCER_ID_BLOCK_SIZE
    ) -> ProducerIdBlock:
        if size < 1:
            raise ValueError(f"producer id block size must be at least 1, got {size}")
        with self._lock:
            self._ensure_open()
            state = self._state
            first = state.next_producer_id
            last = first + size - 1
            if last > MAX_PRODUCER_ID:
                raise MetadataError("producer ids are exhausted")
            self._commit(replace(state, next_producer_id=last + 1), None)
        return ProducerIdBlock(first=first, last=last, broker_id=broker_id)

    # --- change notification -----------------------------------------------------------

    def watch(self, listener: ChangeListener) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return stop

    # --- internals ------------------------------------------------------------------

    def _open_state(self) -> StoreState:
        tmp = temp_path(self._path)
        if tmp.exists():
            logger.warning("discarding unfinished metadata write %s", tmp)
            try:
                tmp.unlink()
            except OSError as exc:
                raise MetadataStoreFileError(tmp, f"cannot remove: {exc.strerror or exc}") from None
        state = read_state(self._path)
        if state is None:
            state = StoreState(cluster_id=self._new_cluster_id(), next_producer_id=0, topics={})
            write_state(self._path, state)
        return state

    def _acquire_process_lock(self) -> int:
        lock_path = self._path.with_name(self._path.name + ".lock")
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise MetadataStoreFileError(lock_path, f"cannot open lock file: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise MetadataStoreFileError(self._path, "in use by another open store (lock held)") from None
        return fd

    def _release_process_lock(self) -> None:
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
        finally:
            os.close(self._lock_fd)

    def _ensure_open(self) -> None:
        if self._closed:
            raise MetadataError(f"metadata store {self._path} is closed")

    def _commit(self, state: StoreState, change: MetadataChange | None) -> None:
        """Make ``state`` durable, then current; the caller holds ``_lock``."""
        write_state(self._path, state)
        self._state = state
        if change is not None:
            self._pending.append(change)

    def _deliver(self) -> None:
        """Hand queued changes to listeners, one thread at a time, in commit order.

        A thread that finds another already delivering leaves its changes in
        the queue for that thread; the re-check after releasing closes the gap
        where a change is queued just as the deliverer finishes. Listeners run
        without ``_lock`` held, so they may call back into the store.
        """
        while True:
            if not self._delivering.acquire(blocking=False):
                return
            try:
                while True:
                    with self._lock:
                        if not self._pending:
                            break
                        change = self._pending.popleft()
                        listeners = list(self._listeners)
                    for listener in listeners:
                        try:
                            listener(change)
                        except Exception:
                            logger.exception("metadata change listener failed on %s", change)
            finally:
                self._delivering.release()
            with self._lock:
                if not self._pending:
                    return

    def _new_cluster_id(self) -> str:
        while True:
            cluster_id = _encode_cluster_id(self._id_source())
            # An id starting with '-' reads as an option on command lines.
            if not cluster_id.startswith("-"):
                return cluster_id

    def _new_topic_id(self, state: StoreState) -> uuid.UUID:
        used = {topic.topic_id for topic in state.topics.values()}
        while True:
            candidate = self._id_source()
            if candidate not in _RESERVED_TOPIC_IDS and candidate not in used:
                return candidate

    @staticmethod
    def _topic(state: StoreState, name: str) -> TopicDescription:
        topic = state.topics.get(name)
        if topic is None:
            raise UnknownTopicError(name)
        return topic


def _encode_cluster_id(value: uuid.UUID) -> str:
    # Kafka's form: URL-safe base64 of the 16 bytes, without padding (22 chars).
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")
