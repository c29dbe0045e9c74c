"""The cluster metadata store in ZooKeeper, in Kafka's znode layout.

:class:`ZkMetadataStore` implements :class:`~broker_core.cluster.metadata_store.MetadataStore`
with the embedded store's semantics and errors, over the znodes of
:mod:`broker_core.cluster.zk.znodes`:

* brokers are ephemeral ``/brokers/ids/<id>`` znodes of this store's session
  (:mod:`~broker_core.cluster.zk.broker_registration`), made again on a new session;
* a topic is its assignment, partition state and config znodes, created,
  grown and deleted in single transactions (:mod:`~broker_core.cluster.zk.topic_znodes`);
* every partition state write is conditional on the state znode's version,
  so a controller and a partition leader never overwrite each other;
* producer id blocks come from ``/latest_producer_id_block``
  (:mod:`~broker_core.cluster.zk.producer_id_blocks`).

Watches: changes made through this store reach :meth:`ZkMetadataStore.watch`
listeners exactly as with the embedded store (in commit order, on the
writing thread). Changes made through other sessions arrive from ZooKeeper
watches (:mod:`~broker_core.cluster.zk.change_feed`) on the store's watch
thread, in order, several quick changes to one znode possibly as one.

Thread-safety: writes are serialised by one lock within the process;
across processes, ZooKeeper's conditional writes and transactions decide.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import uuid
from typing import Any, Callable, Mapping, Sequence, TypeVar

from kazoo.exceptions import KazooException, NodeExistsError, NoNodeError

from broker_core.cluster.assignment import validate_assignment
from broker_core.cluster.errors import (
    InvalidPartitionsError,
    InvalidTopicNameError,
    MetadataError,
    StaleVersionError,
    TopicExistsError,
    UnknownPartitionError,
    UnknownTopicError,
)
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
from broker_core.cluster.zk.broker_registration import BrokerRegistrations
from broker_core.cluster.zk.change_delivery import ChangeDelivery
from broker_core.cluster.zk.change_feed import ChangeFeed
from broker_core.cluster.zk.client import ZkClientConfig, ZkSession
from broker_core.cluster.zk.producer_id_blocks import ProducerIdBlockAllocator
from broker_core.cluster.zk.topic_znodes import StoredTopic, TopicChanged, TopicZNodes
from broker_core.cluster.zk.znodes.brokers import BrokerIdsZNode, BrokerIdZNode
from broker_core.cluster.zk.znodes.cluster import ClusterIdZNode
from broker_core.cluster.zk.znodes.fields import encode_uuid
from broker_core.cluster.zk.znodes.layout import PERSISTENT_PATHS

logger = logging.getLogger(__name__)

# Kafka reserves these two topic ids (the zero id and the metadata topic's).
_RESERVED_TOPIC_IDS = frozenset({uuid.UUID(int=0), uuid.UUID(int=1)})
# Rounds lost to a concurrent writer of the same topic before giving up.
MAX_TOPIC_CONFLICTS = 20
_F = TypeVar("_F", bound=Callable[..., Any])
_R = TypeVar("_R")


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def _zookeeper_errors(method: _F) -> _F:
    """Report a ZooKeeper refusal that no caller can act on as a :class:`MetadataError`."""

    @functools.wraps(method)
    def wrapper(self: ZkMetadataStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except KazooException as exc:
            raise MetadataError(f"{self.describe}: ZooKeeper refused {method.__name__}: {exc!r}") from exc

    return wrapper  # type: ignore[return-value]


class ZkMetadataStore:
    """:class:`~broker_core.cluster.metadata_store.MetadataStore` kept in ZooKeeper.

    Takes a started :class:`ZkSession` (shared with other recipes, such as the
    controller election, as Kafka shares its ZooKeeper client); :meth:`connect`
    makes one that the store owns and closes. ``id_source`` supplies UUIDs
    for the cluster id and topic ids; ``clock_ms`` the registration timestamps.
    """

    def __init__(
        self,
        session: ZkSession,
        *,
        id_source: Callable[[], uuid.UUID] = uuid.uuid4,
        clock_ms: Callable[[], int] = wall_clock_ms,
        owns_session: bool = False,
    ) -> None:
        self._session = session
        self._id_source = id_source
        self._owns_session = owns_session
        self._lock = threading.Lock()
        self._closed = False
        self._delivery = ChangeDelivery()
        self._topics = TopicZNodes(session)
        self._producer_ids = ProducerIdBlockAllocator(session)
        for path in PERSISTENT_PATHS:
            session.ensure_path(path)
        self._cluster_id = self._create_or_get_cluster_id()
        self._feed = ChangeFeed(session, self._lock, self._delivery, clock_ms=clock_ms)
        self._feed.start()
        self._registrations = BrokerRegistrations(session, clock_ms=clock_ms, on_registered=self._registered_again)

    @classmethod
    def connect(cls, config: ZkClientConfig, **kwargs: Any) -> ZkMetadataStore:
        """Open a session of its own (closed with the store) and the store over it."""
        session = ZkSession(config).start()
        try:
            return cls(session, owns_session=True, **kwargs)
        except BaseException:
            session.close()
            raise

    @property
    def session(self) -> ZkSession:
        return self._session

    @property
    def describe(self) -> str:
        return self._session.describe

    def close(self) -> None:
        """Stop watching, withdraw the brokers registered here, and close an owned session."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._feed.stop()
        self._registrations.close()
        if self._session.connected:
            for broker_id in self._registrations.registered_ids():
                try:
                    self._registrations.unregister(broker_id)
                except (MetadataError, KazooException) as exc:
                    logger.warning("%s: cannot withdraw broker %d on close: %s", self.describe, broker_id, exc)
        if self._owns_session:
            self._session.close()

    def __enter__(self) -> ZkMetadataStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- cluster identity -------------------------------------------------------------

    def cluster_id(self) -> str:
        return self._cluster_id

    # --- brokers ------------------------------------------------------------------------

    @_zookeeper_errors
    def register_broker(self, registration: BrokerRegistration) -> None:
        with self._lock:
            self._ensure_open()
            self._registrations.register(registration)
            self._feed.broker_registered(registration.broker_id)
            self._delivery.queue(MetadataChange(ChangeKind.BROKER_REGISTERED, broker_id=registration.broker_id))
        self._delivery.deliver()

    @_zookeeper_errors
    def unregister_broker(self, broker_id: int) -> None:
        with self._lock:
            self._ensure_open()
            self._registrations.unregister(broker_id)
            self._feed.broker_unregistered(broker_id)
            self._delivery.queue(MetadataChange(ChangeKind.BROKER_UNREGISTERED, broker_id=broker_id))
        self._delivery.deliver()

    @_zookeeper_errors
    def list_brokers(self) -> list[BrokerRegistration]:
        ids = sorted(int(name) for name in self._session.get_children(BrokerIdsZNode.path()) if name.isdigit())
        found = self._session.get_many([BrokerIdZNode.path(broker_id) for broker_id in ids])
        brokers = []
        for broker_id in ids:
            entry = found[BrokerIdZNode.path(broker_id)]
            if entry is not None:  # gone since the listing
                brokers.append(BrokerIdZNode.decode(broker_id, entry[0]).registration())
        return brokers

    # --- topics ---------------------------------------------------------------------------

    @_zookeeper_errors
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
            names = self._topics.names()
            if name in names:
                raise TopicExistsError(name)
            other = find_collision(name, names)
            if other is not None:
                raise InvalidTopicNameError(f"topic {name!r} collides with existing topic {other!r}")
            topic = TopicDescription(
                name=name,
                topic_id=self._new_topic_id(names),
                partitions={p: PartitionState.initial(replicas, controller_epoch) for p, replicas in assignment.items()},
                configs=dict(configs or {}),
            )
            self._topics.create(topic)
            self._feed.topic_created(name, topic.topic_id, topic.partitions)
            self._delivery.queue(MetadataChange(ChangeKind.TOPIC_CREATED, topic=name, partitions=tuple(topic.partitions)))
        warning = collision_warning(name)
        if warning is not None:
            logger.warning(warning)
        self._delivery.deliver()
        return topic

    @_zookeeper_errors
    def delete_topic(self, name: str) -> TopicDescription:
        with self._lock:
            self._ensure_open()
            stored = self._retry_on_topic_change(name, self._delete)
            self._feed.topic_deleted(name)
            self._delivery.queue(
                MetadataChange(ChangeKind.TOPIC_DELETED, topic=name, partitions=tuple(stored.description.partitions))
            )
        self._delivery.deliver()
        return stored.description

    @_zookeeper_errors
    def list_topics(self) -> list[str]:
        return self._topics.names()

    @_zookeeper_errors
    def get_topic(self, name: str) -> TopicDescription:
        return self._topics.read(name).description

    @_zookeeper_errors
    def add_partitions(self, name: str, assignment: Mapping[int, Sequence[int]]) -> TopicDescription:
        if not assignment:
            raise InvalidPartitionsError("no partitions to add")
        with self._lock:
            self._ensure_open()

            def add(stored: StoredTopic) -> TopicDescription:
                topic = stored.description
                validate_assignment(
                    assignment, first_partition=topic.partition_count, replication_factor=topic.replication_factor
                )
                controller_epoch = max(state.controller_epoch for state in topic.partitions.values())
                new = {p: PartitionState.initial(replicas, controller_epoch) for p, replicas in assignment.items()}
                self._topics.add_partitions(stored, new)
                return TopicDescription(topic.name, topic.topic_id, {**topic.partitions, **new}, topic.configs)

            updated = self._retry_on_topic_change(name, add)
            self._feed.partitions_added(name, assignment)
            self._delivery.queue(
                MetadataChange(ChangeKind.PARTITIONS_ADDED, topic=name, partitions=tuple(sorted(assignment)))
            )
        self._delivery.deliver()
        return updated

    # --- partition state ----------------------------------------------------------------

    @_zookeeper_errors
    def get_partition_state(self, topic: str, partition: int) -> PartitionState:
        state = self._topics.read(topic).description.partitions.get(partition)
        if state is None:
            raise UnknownPartitionError(topic, partition)
        return state

    @_zookeeper_errors
    def update_partition_state(
        self, topic: str, partition: int, state: PartitionState, *, expected_version: int
    ) -> PartitionState:
        where = f"partition {topic}-{partition}"
        with self._lock:
            self._ensure_open()

            def write(stored: StoredTopic) -> PartitionState:
                current = stored.description.partitions.get(partition)
                if current is None:
                    raise UnknownPartitionError(topic, partition)
                if current.version != expected_version:
                    raise StaleVersionError(where, expected_version, current.version)
                check_state_transition(where, current, state)
                self._topics.write_state(stored, partition, state, expected_version)
                return PartitionState(
                    state.leader, state.leader_epoch, tuple(state.isr), tuple(state.replicas),
                    state.controller_epoch, expected_version + 1,
                )  # fmt: skip

            stored_state = self._retry_on_topic_change(topic, write)
            self._feed.state_written(topic, partition, stored_state.version)
            self._delivery.queue(MetadataChange(ChangeKind.PARTITION_STATE_CHANGED, topic=topic, partitions=(partition,)))
        self._delivery.deliver()
        return stored_state

    # --- topic configs --------------------------------------------------------------------

    @_zookeeper_errors
    def get_topic_configs(self, name: str) -> dict[str, str]:
        if not self._topics.exists(name):
            raise UnknownTopicError(name)
        return self._topics.read_configs(name)

    @_zookeeper_errors
    def set_topic_configs(self, name: str, configs: Mapping[str, str]) -> None:
        with self._lock:
            self._ensure_open()
            notification = self._topics.write_configs(name, dict(configs))
            self._feed.config_change_written(notification)
            self._delivery.queue(MetadataChange(ChangeKind.TOPIC_CONFIG_CHANGED, topic=name))
        self._delivery.deliver()

    # --- producer ids -----------------------------------------------------------------------

    @_zookeeper_errors
    def allocate_producer_id_block(
        self, broker_id: int, size: int = DEFAULT_PRODUCER_ID_BLOCK_SIZE
    ) -> ProducerIdBlock:
        self._ensure_open()
        return self._producer_ids.allocate(broker_id, size)

    # --- change notification ----------------------------------------------------------------

    def watch(self, listener: ChangeListener) -> Callable[[], None]:
        self._delivery.add(listener)
        return lambda: self._delivery.remove(listener)

    # --- internals ----------------------------------------------------------------------------

    def _ensure_open(self) -> None:
        if self._closed:
            raise MetadataError(f"metadata store {self.describe} is closed")

    def _delete(self, stored: StoredTopic) -> StoredTopic:
        self._topics.delete(stored)
        return stored

    def _retry_on_topic_change(self, name: str, operation: Callable[[StoredTopic], _R]) -> _R:
        """Read the topic and run ``operation`` on it, again while another writer changes it first."""
        for _ in range(MAX_TOPIC_CONFLICTS):
            try:
                return operation(self._topics.read(name))
            except TopicChanged:
                continue
        raise MetadataError(f"topic {name!r} kept changing under {MAX_TOPIC_CONFLICTS} attempts to write it")

    def _registered_again(self, broker_id: int) -> None:
        with self._lock:
            if self._closed:
                return
            self._feed.broker_registered(broker_id)
            self._delivery.queue(MetadataChange(ChangeKind.BROKER_REGISTERED, broker_id=broker_id))
        self._delivery.deliver()

    def _create_or_get_cluster_id(self) -> str:
        path = ClusterIdZNode.path()
        try:
            return ClusterIdZNode.decode(self._session.get(path)[0])
        except NoNodeError:
            pass
        candidate = ClusterIdZNode.encode(self._new_cluster_id())

        def attempt(retrying: bool) -> None:
            try:
                self._session.create(path, candidate)
            except NodeExistsError:
                pass  # another broker (or our lost try) was first; read whichever won

        self._session.ensure_path(path.rsplit("/", 1)[0])
        self._session.retry_write(attempt)
        return ClusterIdZNode.decode(self._session.get(path)[0])

    def _new_cluster_id(self) -> str:
        while True:
            cluster_id = encode_uuid(self._id_source())
            # An id starting with '-' reads as an option on command lines.
            if not cluster_id.startswith("-"):
                return cluster_id

    def _new_topic_id(self, names: list[str]) -> uuid.UUID:
        used = self._topics.topic_ids(names)
        while True:
            candidate = self._id_source()
            if candidate not in _RESERVED_TOPIC_IDS and candidate not in used:
                return candidate
