"""The values the admin client takes and returns: new topics, configs, groups.

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
    "BrokerDescription",
    "ClusterDescription",
    "ConfigEntry",
    "ConfigResource",
    "ConfigResourceType",
    "ConfigSource",
    "GroupDescription",
    "GroupListing",
    "MemberDescription",
    "NewTopic",
    "PartitionDescription",
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
