"""A scripted cluster for admin and CLI tests: one FakeBroker answering as brokers 0..n-1 of a cluster.

Metadata and DescribeCluster are answered from ``brokers``, ``controller``
and ``topics`` (every broker id points at the one fake's port, so a client
may open a connection per node id) unless ``answers`` says otherwise. Every other API is answered by ``answers[api_key](version,
body)``; an API with no answer is left silent (the client times out).
``requests`` records ``(api_key, version, body)`` of everything but
ApiVersions, in arrival order, for tests that check what was sent.

``versions`` is the ApiVersions table: drop an API from it to play an older
broker that does not serve it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from spate.protocol import ADVERTISED_VERSIONS, ApiKey, ErrorCode, VersionRange
from spate.protocol.messages.alter_configs import AlterConfigsResponse
from spate.protocol.messages.alter_partition_reassignments import AlterPartitionReassignmentsResponse
from spate.protocol.messages.describe_cluster import DescribeClusterResponse
from spate.protocol.messages.describe_configs import ConfigSource, DescribeConfigsResponse
from spate.protocol.messages.elect_leaders import ElectLeadersResponse
from spate.protocol.messages.incremental_alter_configs import IncrementalAlterConfigsResponse
from spate.protocol.messages.list_offsets import ListOffsetsResponse
from spate.protocol.messages.list_partition_reassignments import ListPartitionReassignmentsResponse
from spate.protocol.messages.metadata import MetadataResponse
from tests.spate.client.fake_broker import SILENT, FakeBroker

Answer = Callable[[int, Any], Any]


@dataclass
class FakePartition:
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...] | None = None  # None: the replicas
    offline: tuple[int, ...] = ()
    leader_epoch: int = 0


def without(*keys: ApiKey) -> dict[ApiKey, VersionRange]:
    """The advertised versions minus ``keys``: an older broker."""
    return {key: span for key, span in ADVERTISED_VERSIONS.items() if key not in keys}


@dataclass
class FakeCluster:
    brokers: tuple[int, ...] = (0,)
    controller: int = 0
    racks: Mapping[int, str] = field(default_factory=dict)
    cluster_id: str = "fake-cluster"
    topics: dict[str, list[FakePartition]] = field(default_factory=dict)
    internal: frozenset[str] = frozenset()
    answers: dict[ApiKey, Answer] = field(default_factory=dict)
    versions: Mapping[ApiKey, VersionRange] = field(default_factory=lambda: dict(ADVERTISED_VERSIONS))
    requests: list[tuple[ApiKey, int, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._broker = FakeBroker(self._answer, versions=self.versions)

    @property
    def bootstrap(self) -> str:
        return self._broker.bootstrap

    @property
    def port(self) -> int:
        return self._broker.port

    def stop(self) -> None:
        self._broker.stop()

    def __enter__(self) -> FakeCluster:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def sent(self, api_key: ApiKey) -> list[tuple[int, Any]]:
        """``(version, body)`` of every ``api_key`` request received."""
        with self._lock:
            return [(version, body) for key, version, body in self.requests if key == api_key]

    def _answer(self, api_key: ApiKey, version: int, body: Any) -> Any:
        if api_key == ApiKey.API_VERSIONS:
            return SILENT
        with self._lock:
            self.requests.append((api_key, version, body))
        if api_key in self.answers:
            return self.answers[api_key](version, body)
        if api_key == ApiKey.METADATA:
            return self.metadata(body)
        if api_key == ApiKey.DESCRIBE_CLUSTER:
            return describe_cluster_response(
                {b: ("127.0.0.1", self.port, self.racks.get(b)) for b in self.brokers}, self.controller, self.cluster_id
            )
        return SILENT

    def metadata(self, body: Any) -> Any:
        M = MetadataResponse
        wanted = None if body.topics is None else [t.name for t in body.topics]
        names = sorted(self.topics) if wanted is None else wanted
        return M(
            brokers=[M.MetadataResponseBroker(node_id=b, host="127.0.0.1", port=self.port, rack=self.racks.get(b))
                     for b in self.brokers],
            cluster_id=self.cluster_id,
            controller_id=self.controller,
            topics=[self._topic(name) for name in names],
        )

    def _topic(self, name: str) -> Any:
        M = MetadataResponse
        if name not in self.topics:
            return M.MetadataResponseTopic(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=name, partitions=[])
        return M.MetadataResponseTopic(
            error_code=0, name=name, is_internal=name in self.internal,
            partitions=[
                M.MetadataResponsePartition(
                    error_code=0 if p.leader >= 0 else ErrorCode.LEADER_NOT_AVAILABLE, partition_index=i,
                    leader_id=p.leader, leader_epoch=p.leader_epoch, replica_nodes=list(p.replicas),
                    isr_nodes=list(p.replicas if p.isr is None else p.isr), offline_replicas=list(p.offline),
                )
                for i, p in enumerate(self.topics[name])
            ],
        )


# --- response builders -----------------------------------------------------------------------------


def describe_cluster_response(
    brokers: Mapping[int, tuple[str, int, str | None]], controller: int, cluster_id: str = "described", code: int = 0
) -> Any:
    R = DescribeClusterResponse
    return R(
        error_code=code, cluster_id=cluster_id, controller_id=controller,
        brokers=[R.DescribeClusterBroker(broker_id=b, host=h, port=p, rack=r) for b, (h, p, r) in brokers.items()],
    )


def election_response(results: Mapping[tuple[str, int], int], code: int = 0) -> Any:
    """ElectLeaders answering ``results[(topic, partition)] = error code``."""
    R = ElectLeadersResponse
    topics: dict[str, list[Any]] = {}
    for (topic, partition), error in results.items():
        topics.setdefault(topic, []).append(R.PartitionResult(partition_id=partition, error_code=error))
    return R(
        error_code=code,
        replica_election_results=[R.ReplicaElectionResult(topic=t, partition_result=p) for t, p in topics.items()],
    )


def reassignment_response(results: Mapping[tuple[str, int], int], code: int = 0, message: str | None = None) -> Any:
    R = AlterPartitionReassignmentsResponse
    topics: dict[str, list[Any]] = {}
    for (topic, partition), error in results.items():
        topics.setdefault(topic, []).append(R.ReassignablePartitionResponse(partition_index=partition, error_code=error))
    return R(
        error_code=code, error_message=message,
        responses=[R.ReassignableTopicResponse(name=t, partitions=p) for t, p in topics.items()],
    )


def reassignments_listing(ongoing: Mapping[tuple[str, int], tuple[list[int], list[int], list[int]]], code: int = 0) -> Any:
    """ListPartitionReassignments answering ``ongoing[(topic, partition)] = (replicas, adding, removing)``."""
    R = ListPartitionReassignmentsResponse
    topics: dict[str, list[Any]] = {}
    for (topic, partition), (replicas, adding, removing) in ongoing.items():
        topics.setdefault(topic, []).append(R.OngoingPartitionReassignment(
            partition_index=partition, replicas=replicas, adding_replicas=adding, removing_replicas=removing,
        ))
    return R(error_code=code, topics=[R.OngoingTopicReassignment(name=t, partitions=p) for t, p in topics.items()])


def config_change_response(body: Any, errors: Mapping[str, int] | None = None) -> Any:
    """IncrementalAlterConfigs answering every resource of ``body``; ``errors`` by resource name."""
    R = IncrementalAlterConfigsResponse
    return R(responses=[
        R.AlterConfigsResourceResponse(
            error_code=(errors or {}).get(r.resource_name, 0), resource_type=r.resource_type,
            resource_name=r.resource_name,
        )
        for r in body.resources
    ])


def offsets_response(body: Any, offset: int = 0) -> Any:
    """ListOffsets answering ``offset`` for every partition asked."""
    R = ListOffsetsResponse
    return R(topics=[
        R.ListOffsetsTopicResponse(name=t.name, partitions=[
            R.ListOffsetsPartitionResponse(partition_index=p.partition_index, error_code=0, offset=offset)
            for p in t.partitions
        ])
        for t in body.topics
    ])


def configs_response(body: Any, overrides: Mapping[str, str] | None = None) -> Any:
    """DescribeConfigs answering each resource with ``overrides`` as dynamic topic configs."""
    R = DescribeConfigsResponse
    return R(results=[
        R.DescribeConfigsResult(
            error_code=0, resource_type=r.resource_type, resource_name=r.resource_name,
            configs=[R.DescribeConfigsResourceResult(name=k, value=v, read_only=False, is_sensitive=False,
                                                     config_source=ConfigSource.DYNAMIC_TOPIC_CONFIG)
                     for k, v in (overrides or {}).items()],
        )
        for r in body.resources
    ])


def alter_configs_response(body: Any) -> Any:
    R = AlterConfigsResponse
    return R(responses=[
        R.AlterConfigsResourceResponse(error_code=0, resource_type=r.resource_type, resource_name=r.resource_name)
        for r in body.resources
    ])
