"""Admin and client requests sent raw to one broker, so tests see every error code as the broker wrote it.

Each function builds the request body, sends it with
``tests.support.controller_requests.call`` and returns the decoded response.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from spate.protocol.api_keys import ApiKey
from spate.protocol.messages.alter_partition_reassignments import AlterPartitionReassignmentsRequest
from spate.protocol.messages.controlled_shutdown import ControlledShutdownRequest
from spate.protocol.messages.create_partitions import CreatePartitionsRequest
from spate.protocol.messages.create_topics import CreateTopicsRequest
from spate.protocol.messages.delete_topics import DeleteTopicsRequest
from spate.protocol.messages.describe_cluster import DescribeClusterRequest
from spate.protocol.messages.describe_configs import DescribeConfigsRequest
from spate.protocol.messages.elect_leaders import ElectLeadersRequest
from spate.protocol.messages.find_coordinator import KEY_TYPE_GROUP, FindCoordinatorRequest
from spate.protocol.messages.incremental_alter_configs import IncrementalAlterConfigsRequest
from spate.protocol.messages.list_partition_reassignments import ListPartitionReassignmentsRequest
from spate.protocol.messages.produce import ProduceRequest
from spate.records import Record, build_batch
from spate.structs import TopicPartition
from tests.support.controller_requests import call

TOPIC_RESOURCE = 2


def create_topic(address: str, name: str, *, partitions: int = -1, replication_factor: int = -1,
                 assignment: Mapping[int, Sequence[int]] | None = None, configs: Mapping[str, str] | None = None,
                 validate_only: bool = False, timeout_ms: int = 30000) -> Any:
    """CreateTopics v4 for one topic; returns that topic's result."""
    Q = CreateTopicsRequest
    topic = Q.CreatableTopic(
        name=name, num_partitions=partitions, replication_factor=replication_factor,
        assignments=[Q.CreatableReplicaAssignment(partition_index=p, broker_ids=list(r))
                     for p, r in (assignment or {}).items()],
        configs=[Q.CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()],
    )
    body = Q(topics=[topic], timeout_ms=timeout_ms, validate_only=validate_only)
    return call(address, ApiKey.CREATE_TOPICS, 4, body).topics[0]


def delete_topic(address: str, name: str, *, timeout_ms: int = 30000) -> int:
    body = DeleteTopicsRequest(topic_names=[name], timeout_ms=timeout_ms)
    return call(address, ApiKey.DELETE_TOPICS, 3, body).responses[0].error_code


def create_partitions(address: str, name: str, count: int, *, assignment: Sequence[Sequence[int]] | None = None,
                      validate_only: bool = False, timeout_ms: int = 30000) -> Any:
    Q = CreatePartitionsRequest
    topic = Q.CreatePartitionsTopic(
        name=name, count=count,
        assignments=None if assignment is None else [Q.CreatePartitionsAssignment(broker_ids=list(r))
                                                     for r in assignment],
    )
    body = Q(topics=[topic], timeout_ms=timeout_ms, validate_only=validate_only)
    return call(address, ApiKey.CREATE_PARTITIONS, 1, body).results[0]


def incremental_alter_configs(address: str, topic: str, ops: Iterable[tuple[str, int, str | None]], *,
                              validate_only: bool = False) -> Any:
    Q = IncrementalAlterConfigsRequest
    resource = Q.AlterConfigsResource(
        resource_type=TOPIC_RESOURCE, resource_name=topic,
        configs=[Q.AlterableConfig(name=n, config_operation=op, value=v) for n, op, v in ops],
    )
    return call(address, ApiKey.INCREMENTAL_ALTER_CONFIGS, 1,
                Q(resources=[resource], validate_only=validate_only)).responses[0]


def describe_topic_configs(address: str, topic: str) -> Any:
    Q = DescribeConfigsRequest
    body = Q(resources=[Q.DescribeConfigsResource(resource_type=TOPIC_RESOURCE, resource_name=topic,
                                                   configuration_keys=None)])
    return call(address, ApiKey.DESCRIBE_CONFIGS, 2, body).results[0]


def elect_preferred_leaders(address: str, partitions: Iterable[TopicPartition] | None, *,
                            timeout_ms: int = 30000, version: int = 2) -> Any:
    Q = ElectLeadersRequest
    topics = None
    if partitions is not None:
        grouped: dict[str, list[int]] = {}
        for tp in partitions:
            grouped.setdefault(tp.topic, []).append(tp.partition)
        topics = [Q.TopicPartitions(topic=t, partitions=ps) for t, ps in grouped.items()]
    return call(address, ApiKey.ELECT_LEADERS, version, Q(topic_partitions=topics, timeout_ms=timeout_ms))


def election_errors(response: Any) -> dict[TopicPartition, int]:
    return {TopicPartition(t.topic, p.partition_id): p.error_code
            for t in response.replica_election_results for p in t.partition_result}


def alter_reassignments(address: str, targets: Mapping[TopicPartition, Sequence[int] | None]) -> dict:
    Q = AlterPartitionReassignmentsRequest
    grouped: dict[str, list[Any]] = {}
    for tp, replicas in targets.items():
        grouped.setdefault(tp.topic, []).append(
            Q.ReassignablePartition(partition_index=tp.partition, replicas=None if replicas is None else list(replicas))
        )
    body = Q(timeout_ms=30000, topics=[Q.ReassignableTopic(name=t, partitions=ps) for t, ps in grouped.items()])
    response = call(address, ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0, body)
    return {TopicPartition(t.name, p.partition_index): p.error_code for t in response.responses for p in t.partitions}


def list_reassignments(address: str) -> dict[TopicPartition, tuple[list[int], list[int], list[int]]]:
    response = call(address, ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, ListPartitionReassignmentsRequest(topics=None))
    return {
        TopicPartition(t.name, p.partition_index): (p.replicas, p.adding_replicas, p.removing_replicas)
        for t in response.topics for p in t.partitions
    }


def find_group_coordinator(address: str, group: str) -> Any:
    return call(address, ApiKey.FIND_COORDINATOR, 2, FindCoordinatorRequest(key=group, key_type=KEY_TYPE_GROUP))


def describe_cluster(address: str) -> Any:
    body = DescribeClusterRequest(include_cluster_authorized_operations=False)
    return call(address, ApiKey.DESCRIBE_CLUSTER, 1, body)


def produce_one(address: str, topic: str, partition: int = 0, value: bytes = b"v") -> Any:
    """Produce one record with acks=1; returns the partition's result."""
    Q = ProduceRequest
    batch = build_batch([Record(0, 1_700_000_000_000, None, value)])
    body = Q(acks=1, timeout_ms=5000, topic_data=[
        Q.TopicProduceData(name=topic, partition_data=[Q.PartitionProduceData(index=partition, records=batch)])
    ])
    return call(address, ApiKey.PRODUCE, 7, body).responses[0].partition_responses[0]


def controlled_shutdown(address: str, broker_id: int, broker_epoch: int = -1) -> Any:
    body = ControlledShutdownRequest(broker_id=broker_id, broker_epoch=broker_epoch)
    return call(address, ApiKey.CONTROLLED_SHUTDOWN, 3, body)
