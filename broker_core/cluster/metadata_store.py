"""The cluster metadata interface shared by the embedded and ZooKeeper stores.

What is stored, by analogy with Kafka's ZooKeeper layout:

* live brokers (``/brokers/ids/<id>``): id, endpoints, rack — ephemeral, a
  broker registers on start and disappears when it stops;
* topics (``/brokers/topics/<t>``): a topic id (UUID) and, per partition,
  the replica list;
* partition state (``.../partitions/<p>/state``): leader, leader epoch, ISR,
  controller epoch, and a version that every conditional write checks;
* topic config overrides (``/config/topics/<t>``), stored as canonical text
  that the caller has already validated;
* the next producer id block (``/latest_producer_id_block``);
* the cluster id.

Every write is atomic: either all of it is durable, or none of it is visible.
Listeners registered with :meth:`MetadataStore.watch` hear about each change
after it is durable, in commit order, on the thread that made the change or
one that made a change concurrently; a listener may call back into the store,
and an exception it raises is logged, not passed to the writer.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Callable, Mapping, NamedTuple, Protocol, Sequence, runtime_checkable

from broker_core.cluster.endpoint import PLAINTEXT, EndPoint, find_endpoint
from broker_core.cluster.errors import InvalidPartitionStateError

NO_LEADER = -1
DEFAULT_PRODUCER_ID_BLOCK_SIZE = 1000


@dataclass(frozen=True)
class BrokerRegistration:
    """A live broker: the address it is reached at, and every endpoint it advertises.

    ``endpoints`` are the broker's advertised listeners (Kafka's ``Broker``);
    a registration made with an address only advertises one PLAINTEXT
    listener there. ``host`` and ``port`` are the address whoever holds the
    registration reaches the broker at: a listener's endpoint
    (:meth:`through`), or what the broker registered first.
    """

    broker_id: int
    host: str
    port: int
    rack: str | None = None
    endpoints: tuple[EndPoint, ...] = ()

    def __post_init__(self) -> None:
        if not self.endpoints and self.port >= 0:
            object.__setattr__(self, "endpoints", (EndPoint(PLAINTEXT, self.host, self.port),))

    @classmethod
    def advertising(cls, broker_id: int, endpoints: Sequence[EndPoint], rack: str | None = None, *,
                    reached_through: str | None = None) -> BrokerRegistration:
        """A broker advertising ``endpoints`` (at least one), reached at ``reached_through``'s endpoint if it
        has one, else at the first."""
        if not endpoints:
            raise ValueError(f"broker {broker_id} advertises no endpoint")
        first = endpoints[0]
        registration = cls(broker_id, first.host, first.port, rack, tuple(endpoints))
        if reached_through is None:
            return registration
        return registration.through(reached_through) or registration

    def endpoint(self, listener_name: str) -> EndPoint | None:
        """The endpoint this broker advertises for ``listener_name``, or None."""
        return find_endpoint(self.endpoints, listener_name)

    def through(self, listener_name: str) -> BrokerRegistration | None:
        """This broker as reached through ``listener_name``; None when it has no such listener."""
        endpoint = self.endpoint(listener_name)
        if endpoint is None:
            return None
        return replace(self, host=endpoint.host, port=endpoint.port)


@dataclass(frozen=True)
class PartitionState:
    """Leadership of one partition.

    ``version`` is assigned by the store: it starts at 0 when the partition is
    created and goes up by one with every accepted update. An update names
    the version it was computed from and fails if that is no longer current.
    ``leader`` is :data:`NO_LEADER` (-1) while no replica can lead.
    """

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    controller_epoch: int
    version: int = 0

    @classmethod
    def initial(cls, replicas: Sequence[int], controller_epoch: int = 0) -> PartitionState:
        """A new partition: the first replica leads at epoch 0 and every replica is in sync."""
        replicas_t = tuple(replicas)
        return cls(
            leader=replicas_t[0] if replicas_t else NO_LEADER,
            leader_epoch=0,
            isr=replicas_t,
            replicas=replicas_t,
            controller_epoch=controller_epoch,
            version=0,
        )


@dataclass(frozen=True)
class TopicDescription:
    """A topic as the store holds it; ``partitions`` maps partition id to its state."""

    name: str
    topic_id: uuid.UUID
    partitions: Mapping[int, PartitionState]
    configs: Mapping[str, str]

    def __post_init__(self) -> None:
        object.__setattr__(self, "partitions", MappingProxyType(dict(sorted(self.partitions.items()))))
        object.__setattr__(self, "configs", MappingProxyType(dict(self.configs)))

    @property
    def partition_count(self) -> int:
        return len(self.partitions)

    @property
    def replication_factor(self) -> int:
        first = self.partitions.get(0)
        return len(first.replicas) if first is not None else 0

    def assignment(self) -> dict[int, tuple[int, ...]]:
        return {partition: state.replicas for partition, state in self.partitions.items()}


class ProducerIdBlock(NamedTuple):
    """Producer ids ``first`` through ``last`` inclusive, owned by ``broker_id``."""

    first: int
    last: int
    broker_id: int

    @property
    def size(self) -> int:
        return self.last - self.first + 1


class ChangeKind(enum.Enum):
    BROKER_REGISTERED = "broker_registered"
    BROKER_UNREGISTERED = "broker_unregistered"
    TOPIC_CREATED = "topic_created"
    TOPIC_DELETED = "topic_deleted"
    PARTITIONS_ADDED = "partitions_added"
    PARTITION_STATE_CHANGED = "partition_state_changed"
    TOPIC_CONFIG_CHANGED = "topic_config_changed"


@dataclass(frozen=True)
class MetadataChange:
    """One committed change. ``partitions`` lists the partitions it touched, if any."""

    kind: ChangeKind
    topic: str | None = None
    partitions: tuple[int, ...] = ()
    broker_id: int | None = None


ChangeListener = Callable[[MetadataChange], None]


@runtime_checkable
class MetadataStore(Protocol):
    """Cluster metadata: brokers, topics, partition state, configs, producer ids."""

    # Cluster identity.
    def cluster_id(self) -> str:
        """A stable 22-character URL-safe base64 id, created with the store."""
        ...

    # Brokers.
    def register_broker(self, registration: BrokerRegistration) -> None:
        """Announce a live broker; :class:`BrokerAlreadyRegisteredError` if its id is taken."""
        ...

    def unregister_broker(self, broker_id: int) -> None:
        """Withdraw a broker; :class:`UnknownBrokerError` if it is not registered."""
        ...

    def list_brokers(self) -> list[BrokerRegistration]:
        """Live brokers, sorted by id."""
        ...

    # Topics.
    def create_topic(
        self,
        name: str,
        assignment: Mapping[int, Sequence[int]],
        configs: Mapping[str, str] | None = None,
        *,
        controller_epoch: int = 0,
    ) -> TopicDescription:
        """Create a topic whose partitions start in :meth:`PartitionState.initial`.

        Raises InvalidTopicNameError (bad or colliding name), TopicExistsError,
        InvalidPartitionsError / InvalidReplicaAssignmentError (bad assignment).
        """
        ...

    def delete_topic(self, name: str) -> TopicDescription:
        """Remove a topic and its state; returns what was removed. UnknownTopicError if absent."""
        ...

    def list_topics(self) -> list[str]:
        """Topic names, sorted."""
        ...

    def get_topic(self, name: str) -> TopicDescription:
        """UnknownTopicError if absent."""
        ...

    def add_partitions(self, name: str, assignment: Mapping[int, Sequence[int]]) -> TopicDescription:
        """Add partitions ``partition_count .. partition_count + len(assignment) - 1``.

        The new partitions must use the topic's replication factor.
        """
        ...

    # Partition state.
    def get_partition_state(self, topic: str, partition: int) -> PartitionState:
        """UnknownTopicError / UnknownPartitionError if absent."""
        ...

    def update_partition_state(
        self, topic: str, partition: int, state: PartitionState, *, expected_version: int
    ) -> PartitionState:
        """Replace the state if its current version is ``expected_version``.

        Returns the stored state, whose version is ``expected_version + 1``
        (the version field of ``state`` is ignored). Raises StaleVersionError
        otherwise.
        """
        ...

    # Topic configs.
    def get_topic_configs(self, name: str) -> dict[str, str]:
        ...

    def set_topic_configs(self, name: str, configs: Mapping[str, str]) -> None:
        """Replace all of a topic's config overrides (AlterConfigs semantics)."""
        ...

    # Producer ids.
    def allocate_producer_id_block(
        self, broker_id: int, size: int = DEFAULT_PRODUCER_ID_BLOCK_SIZE
    ) -> ProducerIdBlock:
        """Reserve the next ``size`` producer ids for ``broker_id``.

        Blocks never overlap and always increase, across restarts too: the
        reservation is durable before it is returned.
        """
        ...

    # Change notification.
    def watch(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener`` for every committed change; returns a function that stops it."""
        ...


def check_state_transition(where: str, current: PartitionState, new: PartitionState) -> None:
    """Invariants every partition state update keeps, whatever the store.

    Replicas are non-empty and distinct, the ISR is a distinct subset of them,
    the leader (unless :data:`NO_LEADER`) is in the ISR, and neither the leader
    epoch nor the controller epoch goes back. A violation is a caller bug and
    raises :class:`InvalidPartitionStateError`.
    """
    if not new.replicas or len(set(new.replicas)) != len(new.replicas):
        raise InvalidPartitionStateError(f"{where}: replicas must be non-empty and distinct, got {list(new.replicas)}")
    if len(set(new.isr)) != len(new.isr) or not set(new.isr) <= set(new.replicas):
        raise InvalidPartitionStateError(
            f"{where}: ISR {list(new.isr)} must be distinct members of {list(new.replicas)}"
        )
    if new.leader != NO_LEADER and new.leader not in new.isr:
        raise InvalidPartitionStateError(f"{where}: leader {new.leader} is not in the ISR {list(new.isr)}")
    if new.leader_epoch < current.leader_epoch:
        raise InvalidPartitionStateError(
            f"{where}: leader epoch would go back from {current.leader_epoch} to {new.leader_epoch}"
        )
    if new.controller_epoch < current.controller_epoch:
        raise InvalidPartitionStateError(
            f"{where}: controller epoch {new.controller_epoch} is older than {current.controller_epoch}"
        )
