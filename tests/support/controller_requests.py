"""Playing the controller in tests: the inter-broker requests it sends, built by hand and sent over a socket.

``FakeController`` builds LeaderAndIsr v5, UpdateMetadata v7 and StopReplica
v3 bodies the way Kafka's controller fills them; :func:`call` sends one
request to a broker with the sans-IO client codec on a blocking socket and
returns the decoded response body.
"""

from __future__ import annotations

import socket
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from spate.protocol import ClientConnection
from spate.protocol.api_keys import ApiKey
from spate.protocol.messages.leader_and_isr import TYPE_INCREMENTAL, LeaderAndIsrRequest
from spate.protocol.messages.stop_replica import StopReplicaRequest
from spate.protocol.messages.update_metadata import UpdateMetadataRequest

LEADER_AND_ISR_VERSION = 5
UPDATE_METADATA_VERSION = 7
STOP_REPLICA_VERSION = 3
PLAINTEXT = 0
LEADER_DURING_DELETE = -2


@dataclass(frozen=True)
class Broker:
    broker_id: int
    host: str
    port: int
    rack: str | None = None
    listener: str = "PLAINTEXT"
    # Further PLAINTEXT listeners it advertises, as (listener name, host, port).
    more_listeners: tuple[tuple[str, str, int], ...] = ()


@dataclass(frozen=True)
class PartitionSpec:
    topic: str
    partition: int
    leader: int
    leader_epoch: int = 0
    replicas: tuple[int, ...] = ()
    isr: tuple[int, ...] | None = None  # None: every replica
    zk_version: int = 0

    @property
    def replica_list(self) -> list[int]:
        return list(self.replicas or (self.leader,))

    @property
    def isr_list(self) -> list[int]:
        return list(self.isr) if self.isr is not None else self.replica_list


@dataclass
class FakeController:
    controller_id: int = 1000
    epoch: int = 1
    topic_ids: dict[str, uuid.UUID] = field(default_factory=dict)

    def topic_id(self, topic: str) -> uuid.UUID:
        return self.topic_ids.setdefault(topic, uuid.uuid4())

    def leader_and_isr(self, partitions: Sequence[PartitionSpec], *, broker_epoch: int = -1,
                       epoch: int | None = None) -> Any:
        Q = LeaderAndIsrRequest
        topics = {}
        for spec in partitions:
            topics.setdefault(spec.topic, []).append(
                Q.LeaderAndIsrPartitionState(
                    partition_index=spec.partition, controller_epoch=self.epoch, leader=spec.leader,
                    leader_epoch=spec.leader_epoch, isr=spec.isr_list, partition_epoch=spec.zk_version,
                    replicas=spec.replica_list, adding_replicas=[], removing_replicas=[], is_new=False,
                )
            )
        return Q(
            controller_id=self.controller_id, controller_epoch=self.epoch if epoch is None else epoch,
            broker_epoch=broker_epoch, type=TYPE_INCREMENTAL,
            topic_states=[
                Q.LeaderAndIsrTopicState(topic_name=name, topic_id=self.topic_id(name), partition_states=states)
                for name, states in topics.items()
            ],
            live_leaders=[],
        )

    def update_metadata(self, brokers: Iterable[Broker], partitions: Sequence[PartitionSpec] = (), *,
                        broker_epoch: int = -1, epoch: int | None = None, controller_id: int | None = None) -> Any:
        Q = UpdateMetadataRequest
        topics = {}
        for spec in partitions:
            topics.setdefault(spec.topic, []).append(
                Q.UpdateMetadataPartitionState(
                    partition_index=spec.partition, controller_epoch=self.epoch, leader=spec.leader,
                    leader_epoch=spec.leader_epoch, isr=spec.isr_list, zk_version=spec.zk_version,
                    replicas=spec.replica_list, offline_replicas=[],
                )
            )
        return Q(
            controller_id=self.controller_id if controller_id is None else controller_id,
            controller_epoch=self.epoch if epoch is None else epoch,
            broker_epoch=broker_epoch,
            topic_states=[
                Q.UpdateMetadataTopicState(topic_name=name, topic_id=self.topic_id(name), partition_states=states)
                for name, states in topics.items()
            ],
            live_brokers=[
                Q.UpdateMetadataBroker(
                    id=b.broker_id, rack=b.rack,
                    endpoints=[
                        Q.UpdateMetadataEndpoint(port=port, host=host, listener=listener, security_protocol=PLAINTEXT)
                        for listener, host, port in ((b.listener, b.host, b.port), *b.more_listeners)
                    ],
                )
                for b in brokers
            ],
        )

    def deleting(self, topic: str, partitions: Iterable[int]) -> list[PartitionSpec]:
        """UpdateMetadata partition states that remove ``topic`` from a broker's cache."""
        return [PartitionSpec(topic, p, LEADER_DURING_DELETE, replicas=(0,)) for p in partitions]

    def stop_replica(self, partitions: Iterable[tuple[str, int, int, bool]], *, broker_epoch: int = -1,
                     epoch: int | None = None) -> Any:
        """``partitions``: (topic, partition, leader epoch, delete)."""
        Q = StopReplicaRequest
        topics = {}
        for topic, partition, leader_epoch, delete in partitions:
            topics.setdefault(topic, []).append(
                Q.StopReplicaPartitionState(partition_index=partition, leader_epoch=leader_epoch,
                                            delete_partition=delete)
            )
        return Q(
            controller_id=self.controller_id, controller_epoch=self.epoch if epoch is None else epoch,
            broker_epoch=broker_epoch,
            topic_states=[Q.StopReplicaTopicState(topic_name=name, partition_states=states)
                          for name, states in topics.items()],
        )


def call(address: str, api_key: ApiKey, version: int, body: Any, *, timeout: float = 30.0) -> Any:
    """Send one request to ``host:port`` and return the response body."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        connection = ClientConnection("fake-controller")
        _, frame = connection.send_request(api_key, version, body)
        sock.sendall(frame)
        while True:
            response = connection.next_response()
            if response is not None:
                return response.body
            data = sock.recv(1 << 16)
            if not data:
                raise ConnectionError("the broker closed the connection")
            connection.receive_data(data)


def send_leader_and_isr(address: str, body: Any) -> Any:
    return call(address, ApiKey.LEADER_AND_ISR, LEADER_AND_ISR_VERSION, body)


def send_update_metadata(address: str, body: Any) -> Any:
    return call(address, ApiKey.UPDATE_METADATA, UPDATE_METADATA_VERSION, body)


def send_stop_replica(address: str, body: Any) -> Any:
    return call(address, ApiKey.STOP_REPLICA, STOP_REPLICA_VERSION, body)
