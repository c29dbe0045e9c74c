"""The cluster as metadata describes it: brokers, topics, partitions and the controller.

The metadata cache builds these and the admin client returns them, so a
producer, a consumer and the admin client see the cluster through the same shapes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BrokerDescription:
    node_id: int
    host: str
    port: int
    rack: str | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True, slots=True)
class PartitionDescription:
    """A partition's leader (-1 when it has none), replicas and in-sync replicas."""

    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class TopicDescription:
    """A topic's partitions in partition order."""

    name: str
    partitions: tuple[PartitionDescription, ...]
    is_internal: bool = False


@dataclass(frozen=True, slots=True)
class ClusterDescription:
    """The brokers, the controller (-1 if unknown) and the cluster id (None before v2 metadata)."""

    cluster_id: str | None
    controller_id: int
    brokers: tuple[BrokerDescription, ...]

    @property
    def controller(self) -> BrokerDescription | None:
        return next((b for b in self.brokers if b.node_id == self.controller_id), None)
