"""The values the admin client takes and returns: new topics, configs, groups, elections, reassignments.

Brokers, topics and partitions are described with the metadata cache's own
types (:mod:`spate.client.net.descriptions`), re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Mapping

from spate.client.net.descriptions import BrokerDescription, ClusterDescription, PartitionDescription, TopicDescription
from spate.protocol.messages.describe_configs import ConfigSource
from spate.structs import TopicPartition

__all__ = [
    "AlterConfigOp",
    "AlterConfigOpType",
    "BrokerDescription",
    "ClusterDescription",
    "ConfigEntry",
    "ConfigResource",
    "ConfigResourceType",
    "ConfigSource",
    "ElectionType",
    "GroupDescription",
    "GroupListing",
    "MemberDescription",
    "NewTopic",
    "PartitionDescription",
    "PartitionReassignment",
    "TopicDescription",
]


@dataclass(frozen=True, slots=True)
class NewTopic:
    """A topic to create. -1 partitions or replication factor asks for the broker's default.

    ``replica_assignment`` (partition -> broker ids) replaces both counts
    when given.
    """

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    configs: Mapping[str, str] = field(default_factory=dict)
    replica_assignment: Mapping[int, list[int]] | None = None


class ConfigResourceType(IntEnum):
    """Kafka's resource type ids in DescribeConfigs and AlterConfigs."""

    TOPIC = 2
    BROKER = 4


@dataclass(frozen=True, slots=True)
class ConfigResource:
    """A topic (by name) or a broker (by node id as text) whose configs are described or altered."""

    type: ConfigResourceType
    name: str

    @classmethod
    def topic(cls, name: str) -> ConfigResource:
        return cls(ConfigResourceType.TOPIC, name)

    @classmethod
    def broker(cls, node_id: int | str) -> ConfigResource:
        return cls(ConfigResourceType.BROKER, str(node_id))

    def __str__(self) -> str:
        return f"{self.type.name.lower()} {self.name}"


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One config's effective value (None when unset or sensitive) and where it came from.

    ``synonyms`` lists ``(name, value, source)`` from highest precedence
    down, as DescribeConfigs v1+ reports them.
    """

    name: str
    value: str | None
    source: ConfigSource = ConfigSource.UNKNOWN
    is_read_only: bool = False
    is_sensitive: bool = False
    synonyms: tuple[tuple[str, str | None, ConfigSource], ...] = ()

    @property
    def is_default(self) -> bool:
        return self.source == ConfigSource.DEFAULT_CONFIG


class AlterConfigOpType(IntEnum):
    """What an :class:`AlterConfigOp` does to its key (IncrementalAlterConfigs' ``config_operation``).

    APPEND and SUBTRACT add to or remove from a list-valued config (e.g. ``cleanup.policy``).
    """

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclass(frozen=True, slots=True)
class AlterConfigOp:
    """One change to one config key for ``Admin.incremental_alter_configs`` (Kafka's AlterConfigOp).

    ``op`` may be given by name (``"set"``, ``"delete"``, ...). DELETE returns the key to its
    default and needs no value; the other operations need one.
    """

    name: str
    value: str | None = None
    op: AlterConfigOpType = AlterConfigOpType.SET

    OpType = AlterConfigOpType  # Kafka spells it AlterConfigOp.OpType

    def __post_init__(self) -> None:
        op = self.op
        if isinstance(op, str):
            try:
                op = AlterConfigOpType[op.upper()]
            except KeyError:
                raise ValueError(f"unknown config operation {self.op!r}: use set, delete, append or subtract") from None
            object.__setattr__(self, "op", op)
        if op != AlterConfigOpType.DELETE and self.value is None:
            raise ValueError(f"{op.name} of config {self.name!r} needs a value")


# --- partitions ---------------------------------------------------------------------------------


class ElectionType(IntEnum):
    """Kafka's ElectLeaders ``election_type``: the preferred (first) replica, or any replica (unclean)."""

    PREFERRED = 0
    UNCLEAN = 1

    @classmethod
    def parse(cls, value: str | ElectionType) -> ElectionType:
        if isinstance(value, ElectionType):
            return value
        try:
            return cls[value.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown election type {value!r}: use 'preferred' or 'unclean'") from None


@dataclass(frozen=True, slots=True)
class PartitionReassignment:
    """A reassignment in progress (Kafka's PartitionReassignment).

    ``replicas`` is the full replica set while the move lasts (old and new), ``adding_replicas`` the
    replicas being added and ``removing_replicas`` those that leave once the new ones are in sync.
    """

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    @property
    def target_replicas(self) -> tuple[int, ...]:
        """The replica set the partition will have when the move is done."""
        return tuple(r for r in self.replicas if r not in self.removing_replicas)


# --- consumer groups ---------------------------------------------------------------------------

# Group states as the broker names them in DescribeGroups.
GROUP_STATE_EMPTY = "Empty"
GROUP_STATE_DEAD = "Dead"


@dataclass(frozen=True, slots=True)
class GroupListing:
    """A group some broker coordinates; ``protocol_type`` is "" for groups that only commit offsets."""

    group_id: str
    protocol_type: str

    @property
    def is_simple_consumer_group(self) -> bool:
        return not self.protocol_type


@dataclass(frozen=True, slots=True)
class MemberDescription:
    """One member of a group and the partitions it was assigned.

    ``assignment`` is decoded only for groups of protocol type ``consumer``;
    it is empty for other groups and for members between rebalances.
    """

    member_id: str
    client_id: str
    host: str
    group_instance_id: str | None = None
    assignment: tuple[TopicPartition, ...] = ()


@dataclass(frozen=True, slots=True)
class GroupDescription:
    """A group's state (``Empty``, ``PreparingRebalance``, ``CompletingRebalance``, ``Stable``, ``Dead``).

    A group the coordinator does not know is described as ``Dead`` with no
    members, as Kafka does; ``exists`` tells the two apart. ``protocol`` is
    the chosen assignor of a consumer group (e.g. ``range``).
    """

    group_id: str
    state: str
    protocol_type: str
    protocol: str
    members: tuple[MemberDescription, ...]
    coordinator: BrokerDescription | None = None

    @property
    def exists(self) -> bool:
        return self.state != GROUP_STATE_DEAD

    @property
    def is_empty(self) -> bool:
        """No members: its offsets may be changed from outside (Empty, or Dead i.e. unknown)."""
        return self.state in (GROUP_STATE_EMPTY, GROUP_STATE_DEAD)
