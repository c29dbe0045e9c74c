"""What request handlers read of the cluster: brokers, the controller, topics and their partitions.

One small interface, :class:`MetadataView`, with two implementations:

* embedded mode: :class:`StoreMetadataView`, answering from the broker's own
  metadata store (it is the whole cluster, and its controller);
* cluster mode: ``broker_core.server.metadata_cache.MetadataCache``, fed only
  by the controller's UpdateMetadata requests (Kafka's ``MetadataCache``).

Clients are told the brokers' endpoints on the listener their request came
in on: each listener's request handlers read a :class:`ListenerMetadataView`
of the broker's view (``view.for_listener(name)``).

Every method answers from memory (the embedded store is a local file read
once), so handlers call them on the event loop.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping, Protocol

from broker_core.cluster.errors import UnknownTopicError
from broker_core.cluster.metadata_store import NO_LEADER, BrokerRegistration, MetadataStore

NO_CONTROLLER = -1


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """One partition's leadership as the cluster last announced it."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()
    # The state znode's version (Kafka's partition epoch); 0 in embedded mode.
    partition_epoch: int = 0

    @property
    def has_leader(self) -> bool:
        return self.leader >= 0


@dataclass(frozen=True)
class TopicMetadata:
    name: str
    topic_id: uuid.UUID
    partitions: Mapping[int, PartitionMetadata]

    def __post_init__(self) -> None:
        object.__setattr__(self, "partitions", MappingProxyType(dict(sorted(self.partitions.items()))))

    @property
    def partition_count(self) -> int:
        return len(self.partitions)


class MetadataView(Protocol):
    def cluster_id(self) -> str:
        ...

    def controller_id(self) -> int:
        """The active controller's broker id, or :data:`NO_CONTROLLER` (-1) while none is known."""
        ...

    def alive_brokers(self) -> list[BrokerRegistration]:
        """Live brokers, sorted by id."""
        ...

    def alive_broker(self, broker_id: int) -> BrokerRegistration | None:
        ...

    def is_alive(self, broker_id: int) -> bool:
        """Whether the broker is alive, even when it is not reachable through this view's listener."""
        ...

    def topic_names(self) -> list[str]:
        """Every topic, sorted."""
        ...

    def get_topic(self, name: str) -> TopicMetadata:
        """:class:`UnknownTopicError` if the topic is not known."""
        ...

    def partition_count(self, name: str) -> int | None:
        """None when the topic is not known."""
        ...


class StoreMetadataView:
    """The embedded broker's view: its metadata store, with itself as controller."""

    def __init__(self, store: MetadataStore, node_id: int) -> None:
        self._store = store
        self._node_id = node_id
        # The store replaces a topic's description on every change, so a description seen before converts
        # to the metadata made from it then (at thousands of partitions the conversion costs milliseconds).
        self._converted: dict[str, tuple[object, TopicMetadata]] = {}

    def cluster_id(self) -> str:
        return self._store.cluster_id()

    def controller_id(self) -> int:
        return self._node_id

    def alive_brokers(self) -> list[BrokerRegistration]:
        return self._store.list_brokers()

    def alive_broker(self, broker_id: int) -> BrokerRegistration | None:
        return next((b for b in self._store.list_brokers() if b.broker_id == broker_id), None)

    def is_alive(self, broker_id: int) -> bool:
        return self.alive_broker(broker_id) is not None

    def topic_names(self) -> list[str]:
        return self._store.list_topics()

    def get_topic(self, name: str) -> TopicMetadata:
        try:
            topic = self._store.get_topic(name)
        except UnknownTopicError:
            self._converted.pop(name, None)
            raise
        converted = self._converted.get(name)
        if converted is not None and converted[0] is topic:
            return converted[1]
        partitions = {
            index: PartitionMetadata(state.leader, state.leader_epoch, tuple(state.isr), tuple(state.replicas))
            for index, state in topic.partitions.items()
        }
        metadata = TopicMetadata(topic.name, topic.topic_id, partitions)
        self._converted[name] = (topic, metadata)
        if len(self._converted) > 2 * len(self._store.list_topics()) + 16:  # forget deleted topics
            current = set(self._store.list_topics())
            self._converted = {n: entry for n, entry in self._converted.items() if n in current}
        return metadata

    def partition_count(self, name: str) -> int | None:
        try:
            return self._store.get_topic(name).partition_count
        except UnknownTopicError:
            return None

    def for_listener(self, listener_name: str) -> MetadataView:
        """This view as the clients of ``listener_name`` see it."""
        return ListenerMetadataView(self, lambda: {b.broker_id: b for b in self._store.list_brokers()},
                                    listener_name)


class ListenerMetadataView:
    """A view as the clients of one listener see it: every live broker at its endpoint on that listener.

    Kafka answers Metadata, DescribeCluster and FindCoordinator with the
    endpoints of the listener the request arrived on; a broker that does not
    advertise that listener is left out. Everything else is ``view``'s.
    """

    def __init__(self, view: MetadataView, registrations: Callable[[], Mapping[int, BrokerRegistration]],
                 listener_name: str) -> None:
        self._view = view
        self._registrations = registrations
        self.listener_name = listener_name

    def cluster_id(self) -> str:
        return self._view.cluster_id()

    def controller_id(self) -> int:
        return self._view.controller_id()

    def alive_brokers(self) -> list[BrokerRegistration]:
        registrations = self._registrations()
        reached = (registrations[broker_id].through(self.listener_name) for broker_id in sorted(registrations))
        return [broker for broker in reached if broker is not None]

    def alive_broker(self, broker_id: int) -> BrokerRegistration | None:
        registration = self._registrations().get(broker_id)
        return None if registration is None else registration.through(self.listener_name)

    def is_alive(self, broker_id: int) -> bool:
        return broker_id in self._registrations()

    def topic_names(self) -> list[str]:
        return self._view.topic_names()

    def get_topic(self, name: str) -> TopicMetadata:
        return self._view.get_topic(name)

    def partition_count(self, name: str) -> int | None:
        return self._view.partition_count(name)


def partition_of(view: MetadataView, topic: str, partition: int) -> PartitionMetadata | None:
    """The partition as ``view`` knows it; None when the topic or the partition is unknown."""
    try:
        return view.get_topic(topic).partitions.get(partition)
    except UnknownTopicError:
        return None


def leader_of(view: MetadataView, topic: str, partition: int) -> BrokerRegistration | None:
    """The live broker leading the partition, or None (unknown partition, no leader, leader not alive)."""
    state = partition_of(view, topic, partition)
    if state is None or state.leader == NO_LEADER:
        return None
    return view.alive_broker(state.leader)
