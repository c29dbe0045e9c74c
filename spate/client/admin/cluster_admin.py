"""The cluster half of the admin client: DescribeCluster, leader elections and partition reassignments.

Kafka's AdminClient sends ElectLeaders and the reassignment requests to the
controller; Spate's brokers take them anywhere (they write what the request
asks to ZooKeeper and the controller acts on it), so they go to the least
loaded broker. A broker that insists on the controller answers NOT_CONTROLLER
(Kafka's older brokers): the call then refreshes the metadata and asks the
controller it names. ``describe_cluster`` asks DescribeCluster where the broker
serves it and reads the same facts from Metadata otherwise.

Per-partition refusals are collected into one :class:`AdminError` once the
other partitions are settled, as the rest of the admin client does. An
election answered ELECTION_NOT_NEEDED (the preferred replica already leads)
is a result, not a failure.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from spate.client.admin.admin_types import ElectionType, PartitionReassignment
from spate.client.errors import UnsupportedApiError
from spate.client.net.descriptions import BrokerDescription, ClusterDescription
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import KeyedCall, Retrier
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.alter_partition_reassignments import AlterPartitionReassignmentsRequest
from spate.protocol.messages.describe_cluster import DescribeClusterRequest
from spate.protocol.messages.elect_leaders import ElectLeadersRequest
from spate.protocol.messages.list_partition_reassignments import ListPartitionReassignmentsRequest
from spate.structs import TopicPartition, group_by_topic

# The answers an election may give that are not failures.
ELECTION_RESULTS = frozenset({ErrorCode.NONE, ErrorCode.ELECTION_NOT_NEEDED})


def controller_node(network: NetworkClient, deadline: float) -> int:
    """The controller's node id from fresh enough metadata (any reachable broker if the cluster names none)."""
    snapshot = network.metadata.snapshot
    if snapshot.controller_id < 0 or network.metadata.update_requested:
        snapshot = network.fetch_metadata([], deadline=deadline)
    if snapshot.controller_id >= 0 and snapshot.controller_id in snapshot.brokers:
        return snapshot.controller_id
    node = network.least_loaded_node(network.clock())
    if node is None:
        raise KafkaError(ErrorCode.NOT_CONTROLLER, "no controller known and no broker reachable")
    return node


class _Target:
    """Where one call sends its requests: any broker, then the controller once a broker said NOT_CONTROLLER."""

    def __init__(self, network: NetworkClient) -> None:
        self._network = network
        self._controller_only = False

    def node(self, deadline: float) -> int:
        return controller_node(self._network, deadline) if self._controller_only else self._network.any_node()

    def not_controller(self, what: str, message: str | None = None) -> KafkaError:
        """The retriable error for a NOT_CONTROLLER answer; later attempts go to the controller."""
        self._controller_only = True
        return KafkaError(ErrorCode.NOT_CONTROLLER, message or what)


class ClusterAdmin:
    """``retrier`` is the admin's way of retrying (it asks for fresh metadata after each failure)."""

    def __init__(self, network: NetworkClient, retrier: Retrier) -> None:
        self._network = network
        self._retrier = retrier

    def _operation_timeout_ms(self, deadline: float) -> int:
        return max(1, int((deadline - self._network.clock()) * 1000))

    # --- the cluster --------------------------------------------------------------------------

    def describe_cluster(self, deadline: float) -> ClusterDescription:
        def attempt(deadline: float) -> ClusterDescription:
            node = self._network.any_node()
            try:
                _, response = self._network.request(
                    node, ApiKey.DESCRIBE_CLUSTER,
                    DescribeClusterRequest(include_cluster_authorized_operations=False), deadline=deadline,
                )
            except UnsupportedApiError:  # an older broker: Metadata says the same
                return self._network.fetch_metadata([], deadline=deadline, node=node).describe_cluster()
            code = ErrorCode.of(response.error_code)
            if code != ErrorCode.NONE:
                raise KafkaError(code, response.error_message or "describe the cluster")
            brokers = sorted(
                (BrokerDescription(b.broker_id, b.host, b.port, b.rack) for b in response.brokers),
                key=lambda b: b.node_id,
            )
            return ClusterDescription(response.cluster_id, response.controller_id, tuple(brokers))

        return self._retrier.call("describe_cluster", attempt, deadline)

    # --- leader elections ---------------------------------------------------------------------

    def elect_leaders(
        self, election_type: ElectionType, partitions: Iterable[TopicPartition] | None, deadline: float
    ) -> dict[TopicPartition, ErrorCode]:
        """NONE (elected) or ELECTION_NOT_NEEDED per partition; refusals raise AdminError.

        ``partitions`` None asks for every partition of the cluster; the answer then names them.
        """
        target = _Target(self._network)
        call: KeyedCall[TopicPartition] = KeyedCall({tp: tp for tp in partitions or ()})
        everything = partitions is None
        if not everything and not call.pending:
            return {}

        def attempt(deadline: float) -> None:
            asked = None if everything else sorted(call.pending)
            body = ElectLeadersRequest(
                election_type=int(election_type),
                topic_partitions=None if asked is None else [
                    ElectLeadersRequest.TopicPartitions(topic=topic, partitions=numbers)
                    for topic, numbers in group_by_topic(asked, value=lambda tp: tp.partition).items()
                ],
                timeout_ms=self._operation_timeout_ms(deadline),
            )
            # v0 always elects the preferred replica: any other kind needs v1.
            _, response = self._network.request(
                target.node(deadline), ApiKey.ELECT_LEADERS, body, deadline=deadline,
                min_version=None if election_type == ElectionType.PREFERRED else 1,
            )
            code = ErrorCode.of(response.error_code)
            if code == ErrorCode.NOT_CONTROLLER:
                raise target.not_controller("elect leaders")
            if code != ErrorCode.NONE:
                raise KafkaError(code, f"elect {election_type.name.lower()} leaders")
            for result in response.replica_election_results:
                for part in result.partition_result:
                    tp = TopicPartition(result.topic, part.partition_id)
                    if everything and tp not in call.results and tp not in call.errors:
                        call.pending[tp] = tp  # "every partition": the answer names them
                    self._settle_election(call, tp, ErrorCode.of(part.error_code), part.error_message, target)
            if not call.retrying:
                _fail_unanswered(call, "elect a leader for")

        results = self._retrier.call_each("elect_leaders", call, attempt, deadline).results
        return dict(sorted(results.items()))

    @staticmethod
    def _settle_election(
        call: KeyedCall[TopicPartition], tp: TopicPartition, code: ErrorCode, message: str | None, target: _Target
    ) -> None:
        if tp not in call:
            return
        if code in ELECTION_RESULTS:
            call.succeed(tp, code)
        elif code == ErrorCode.NOT_CONTROLLER:
            call.retry(target.not_controller(f"elect a leader for {tp}", message))
        else:
            call.fail(tp, KafkaError(code, message or f"elect a leader for {tp}"))

    # --- reassignments ------------------------------------------------------------------------

    def alter_partition_reassignments(
        self, reassignments: Mapping[TopicPartition, Sequence[int] | None], deadline: float
    ) -> None:
        """Start moving each partition to the given replicas (None: cancel its reassignment)."""
        target = _Target(self._network)
        call: KeyedCall[TopicPartition] = KeyedCall(
            {tp: None if replicas is None else [int(r) for r in replicas] for tp, replicas in reassignments.items()}
        )

        def attempt(deadline: float) -> None:
            by_topic = group_by_topic(
                sorted(call.pending),
                value=lambda tp: AlterPartitionReassignmentsRequest.ReassignablePartition(
                    partition_index=tp.partition, replicas=call.pending[tp]
                ),
            )
            body = AlterPartitionReassignmentsRequest(
                timeout_ms=self._operation_timeout_ms(deadline),
                topics=[AlterPartitionReassignmentsRequest.ReassignableTopic(name=n, partitions=p)
                        for n, p in by_topic.items()],
            )
            _, response = self._network.request(
                target.node(deadline), ApiKey.ALTER_PARTITION_REASSIGNMENTS, body, deadline=deadline
            )
            code = ErrorCode.of(response.error_code)
            if code == ErrorCode.NOT_CONTROLLER:
                raise target.not_controller("alter partition reassignments", response.error_message)
            for topic in response.responses:
                for part in topic.partitions:
                    tp = TopicPartition(topic.name, part.partition_index)
                    # A top-level error stands for every partition (as Kafka's AdminClient reads it).
                    part_code = ErrorCode.of(part.error_code) if code == ErrorCode.NONE else code
                    message = part.error_message if code == ErrorCode.NONE else response.error_message
                    if part_code == ErrorCode.NOT_CONTROLLER:
                        call.retry(target.not_controller(f"reassign {tp}", message))
                    else:
                        call.settle(tp, part_code, message or _reassign_action(tp, call.pending.get(tp)))
            if code != ErrorCode.NONE:
                for tp in list(call.pending):
                    call.fail(tp, KafkaError(code, response.error_message or _reassign_action(tp, call.pending[tp])))
            elif not call.retrying:
                _fail_unanswered(call, "reassign")

        self._retrier.call_each("alter_partition_reassignments", call, attempt, deadline)

    def list_partition_reassignments(
        self, partitions: Iterable[TopicPartition] | None, deadline: float
    ) -> dict[TopicPartition, PartitionReassignment]:
        """The reassignments in progress among ``partitions`` (None: all of them), by partition."""
        wanted = None if partitions is None else sorted(set(partitions))
        target = _Target(self._network)

        def attempt(deadline: float) -> dict[TopicPartition, PartitionReassignment]:
            topics = None
            if wanted is not None:
                topics = [
                    ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics(name=n, partition_indexes=p)
                    for n, p in group_by_topic(wanted, value=lambda tp: tp.partition).items()
                ]
            body = ListPartitionReassignmentsRequest(timeout_ms=self._operation_timeout_ms(deadline), topics=topics)
            _, response = self._network.request(
                target.node(deadline), ApiKey.LIST_PARTITION_REASSIGNMENTS, body, deadline=deadline
            )
            code = ErrorCode.of(response.error_code)
            if code == ErrorCode.NOT_CONTROLLER:
                raise target.not_controller("list partition reassignments", response.error_message)
            if code != ErrorCode.NONE:
                raise KafkaError(code, response.error_message or "list partition reassignments")
            found = {
                TopicPartition(topic.name, part.partition_index): PartitionReassignment(
                    tuple(part.replicas), tuple(part.adding_replicas), tuple(part.removing_replicas)
                )
                for topic in response.topics
                for part in topic.partitions
            }
            return dict(sorted(found.items()))

        return self._retrier.call("list_partition_reassignments", attempt, deadline)


def _reassign_action(tp: TopicPartition, replicas: list[int] | None) -> str:
    if replicas is None:
        return f"cancel the reassignment of {tp}"
    return f"reassign {tp} to replicas {replicas}"


def _fail_unanswered(call: KeyedCall[TopicPartition], action: str) -> None:
    """A partition the answer left out fails: the broker said nothing about it."""
    for tp in list(call.pending):
        call.fail(tp, KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"{action} {tp}: the broker's answer left it out"))

