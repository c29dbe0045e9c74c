"""Consumer group administration: the requests behind ``Admin``'s group methods.

Every group request goes to the group's coordinator, found with
FindCoordinator on each attempt (so a coordinator that moved is found again
after NOT_COORDINATOR); ListGroups goes to every broker, since each lists
only the groups it coordinates. COORDINATOR_NOT_AVAILABLE,
COORDINATOR_LOAD_IN_PROGRESS and NOT_COORDINATOR are retried until the
deadline; every other error is reported per group or partition in an
:class:`AdminError`.

Member assignments come in Kafka's ConsumerProtocol format, read by
:mod:`spate.client.consumer.consumer_protocol`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Iterable, Mapping

from spate.client.admin.admin_types import BrokerDescription, GroupDescription, GroupListing, MemberDescription
from spate.client.consumer.consumer_protocol import (  # noqa: F401  (encode_assignment: re-exported)
    CONSUMER_PROTOCOL_TYPE,
    decode_assignment,
    encode_assignment,
)
from spate.client.errors import AdminError
from spate.client.net.network_client import NetworkClient
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.errors import ProtocolDecodeError
from spate.protocol.messages.delete_groups import DeleteGroupsRequest
from spate.protocol.messages.describe_groups import DescribeGroupsRequest
from spate.protocol.messages.find_coordinator import KEY_TYPE_GROUP, FindCoordinatorRequest
from spate.protocol.messages.list_groups import ListGroupsRequest
from spate.protocol.messages.offset_commit import OffsetCommitRequest
from spate.protocol.messages.offset_delete import OffsetDeleteRequest
from spate.protocol.messages.offset_fetch import OffsetFetchRequest
from spate.structs import OffsetAndMetadata, TopicPartition

Retry = Callable[[str, Callable[[float], Any], float], Any]

# A commit from outside the group: no generation, no member.
NO_GENERATION = -1
NO_MEMBER_ID = ""
# What the coordinator answers a commit from outside a group that has members.
_GROUP_HAS_MEMBERS = frozenset(
    {ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION, ErrorCode.REBALANCE_IN_PROGRESS}
)
_COORDINATOR_MOVED = frozenset(
    {ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}
)


class GroupAdmin:
    """The group half of the admin client; ``retry`` is the admin's retry-until-deadline loop."""

    def __init__(self, network: NetworkClient, retry: Retry) -> None:
        self._network = network
        self._retry = retry

    # --- coordinators ---------------------------------------------------------------------------

    def coordinator(self, group_id: str, deadline: float) -> int:
        """The node id of the group's coordinator; retriable KafkaError while there is none."""
        node = self._any_node()
        _, response = self._network.request(
            node, ApiKey.FIND_COORDINATOR, FindCoordinatorRequest(key=group_id, key_type=KEY_TYPE_GROUP),
            deadline=deadline,
        )
        code = ErrorCode.of(response.error_code)
        if code != ErrorCode.NONE:
            raise KafkaError(code, response.error_message or f"find the coordinator of group {group_id!r}")
        if self._network.node(response.node_id) is None:
            # A broker the cached metadata does not list yet.
            self._network.fetch_metadata([], deadline=deadline)
            if self._network.node(response.node_id) is None:
                raise KafkaError(
                    ErrorCode.COORDINATOR_NOT_AVAILABLE,
                    f"coordinator {response.node_id} of group {group_id!r} is not in the cluster metadata",
                )
        return int(response.node_id)

    def _any_node(self) -> int:
        node = self._network.least_loaded_node(self._network.clock())
        if node is None:
            raise KafkaError(ErrorCode.NETWORK_EXCEPTION, "no broker reachable")
        return node

    # --- listing and describing -----------------------------------------------------------------

    def list_groups(self, deadline: float) -> list[GroupListing]:
        def attempt(deadline: float) -> list[GroupListing]:
            snapshot = self._network.fetch_metadata([], deadline=deadline)
            found: dict[str, GroupListing] = {}
            for node in sorted(snapshot.brokers):
                _, response = self._network.request(node, ApiKey.LIST_GROUPS, ListGroupsRequest(), deadline=deadline)
                code = ErrorCode.of(response.error_code)
                if code != ErrorCode.NONE:
                    raise KafkaError(code, f"list groups on broker {node}")
                for group in response.groups:
                    found[group.group_id] = GroupListing(group.group_id, group.protocol_type or "")
            return [found[g] for g in sorted(found)]

        return self._retry("list_groups", attempt, deadline)

    def describe_groups(self, group_ids: Iterable[str], deadline: float) -> dict[str, GroupDescription]:
        pending = list(dict.fromkeys(group_ids))
        results: dict[str, GroupDescription] = {}
        errors: dict[Any, KafkaError] = {}

        def attempt(deadline: float) -> None:
            retry: KafkaError | None = None
            for node, groups in self._by_coordinator([g for g in pending if g not in results], deadline).items():
                _, response = self._network.request(
                    node, ApiKey.DESCRIBE_GROUPS, DescribeGroupsRequest(groups=groups), deadline=deadline
                )
                for described in response.groups:
                    if described.group_id not in pending or described.group_id in results:
                        continue
                    code = ErrorCode.of(described.error_code)
                    if code == ErrorCode.NONE:
                        results[described.group_id] = _description(described, self._network.node(node))
                    elif code in _COORDINATOR_MOVED:
                        retry = KafkaError(code, f"describe group {described.group_id!r}")
                    else:
                        errors[described.group_id] = KafkaError(code, f"describe group {described.group_id!r}")
                        pending.remove(described.group_id)
            if retry is not None:
                raise retry

        self._retry("describe_groups", attempt, deadline)
        if errors:
            raise AdminError("describe_groups", errors)
        return {g: results[g] for g in pending}

    def _by_coordinator(self, group_ids: list[str], deadline: float) -> dict[int, list[str]]:
        nodes: dict[int, list[str]] = defaultdict(list)
        for group_id in group_ids:
            nodes[self.coordinator(group_id, deadline)].append(group_id)
        return nodes

    # --- offsets --------------------------------------------------------------------------------

    def list_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None, deadline: float
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        wanted = None if partitions is None else sorted(set(partitions))
        errors: dict[Any, KafkaError] = {}

        def attempt(deadline: float) -> dict[TopicPartition, OffsetAndMetadata]:
            errors.clear()
            node = self.coordinator(group_id, deadline)
            topics = None
            if wanted is not None:
                by_topic: dict[str, list[int]] = defaultdict(list)
                for tp in wanted:
                    by_topic[tp.topic].append(tp.partition)
                topics = [
                    OffsetFetchRequest.OffsetFetchRequestTopic(name=name, partition_indexes=numbers)
                    for name, numbers in by_topic.items()
                ]
            # A null topic list ("every partition") needs v2.
            _, response = self._network.request(
                node, ApiKey.OFFSET_FETCH, OffsetFetchRequest(group_id=group_id, topics=topics),
                deadline=deadline, min_version=2,
            )
            code = ErrorCode.of(response.error_code)
            if code != ErrorCode.NONE:
                raise KafkaError(code, f"fetch the offsets of group {group_id!r}")
            offsets: dict[TopicPartition, OffsetAndMetadata] = {}
            for topic in response.topics:
                for part in topic.partitions:
                    tp = TopicPartition(topic.name, part.partition_index)
                    part_code = ErrorCode.of(part.error_code)
                    if part_code in _COORDINATOR_MOVED:
                        raise KafkaError(part_code, f"fetch the offsets of group {group_id!r}")
                    if part_code != ErrorCode.NONE:
                        errors[tp] = KafkaError(part_code, f"fetch the committed offset of {tp} in group {group_id!r}")
                    elif part.committed_offset >= 0:
                        offsets[tp] = OffsetAndMetadata(part.committed_offset, part.metadata, part.committed_leader_epoch)
            return dict(sorted(offsets.items()))

        offsets = self._retry("list_group_offsets", attempt, deadline)
        if errors:
            raise AdminError("list_group_offsets", errors)
        return offsets

    def alter_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, OffsetAndMetadata | int], deadline: float
    ) -> None:
        pending = {tp: _as_committed(value) for tp, value in offsets.items()}
        for tp, committed in pending.items():
            if committed.offset < 0:
                raise ValueError(f"cannot commit negative offset {committed.offset} for {tp}")
        errors: dict[Any, KafkaError] = {}

        def attempt(deadline: float) -> None:
            node = self.coordinator(group_id, deadline)
            by_topic: dict[str, list[Any]] = defaultdict(list)
            for tp, committed in pending.items():
                by_topic[tp.topic].append(
                    OffsetCommitRequest.OffsetCommitRequestPartition(
                        partition_index=tp.partition,
                        committed_offset=committed.offset,
                        committed_leader_epoch=committed.leader_epoch,
                        committed_metadata=committed.metadata,
                    )
                )
            body = OffsetCommitRequest(
                group_id=group_id,
                generation_id_or_member_epoch=NO_GENERATION,
                member_id=NO_MEMBER_ID,
                topics=[OffsetCommitRequest.OffsetCommitRequestTopic(name=n, partitions=p) for n, p in by_topic.items()],
            )
            _, response = self._network.request(node, ApiKey.OFFSET_COMMIT, body, deadline=deadline)
            retry: KafkaError | None = None
            for topic in response.topics:
                for part in topic.partitions:
                    tp = TopicPartition(topic.name, part.partition_index)
                    if tp not in pending:
                        continue
                    code = ErrorCode.of(part.error_code)
                    if code == ErrorCode.NONE:
                        del pending[tp]
                    elif code in _COORDINATOR_MOVED:
                        retry = KafkaError(code, f"commit the offset of {tp} for group {group_id!r}")
                    else:
                        del pending[tp]
                        errors[tp] = KafkaError(code, _commit_failure(group_id, tp, code))
            if retry is not None:
                raise retry

        self._retry("alter_group_offsets", attempt, deadline)
        if errors:
            raise AdminError("alter_group_offsets", errors)

    def delete_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition], deadline: float) -> None:
        pending = set(partitions)
        errors: dict[Any, KafkaError] = {}

        def attempt(deadline: float) -> None:
            node = self.coordinator(group_id, deadline)
            by_topic: dict[str, list[Any]] = defaultdict(list)
            for tp in sorted(pending):
                by_topic[tp.topic].append(OffsetDeleteRequest.OffsetDeleteRequestPartition(partition_index=tp.partition))
            body = OffsetDeleteRequest(
                group_id=group_id,
                topics=[OffsetDeleteRequest.OffsetDeleteRequestTopic(name=n, partitions=p) for n, p in by_topic.items()],
            )
            _, response = self._network.request(node, ApiKey.OFFSET_DELETE, body, deadline=deadline)
            code = ErrorCode.of(response.error_code)
            if code in _COORDINATOR_MOVED:
                raise KafkaError(code, f"delete offsets of group {group_id!r}")
            if code != ErrorCode.NONE:
                errors[group_id] = KafkaError(code, f"delete offsets of group {group_id!r}")
                pending.clear()
                return
            for topic in response.topics:
                for part in topic.partitions:
                    tp = TopicPartition(topic.name, part.partition_index)
                    if tp not in pending:
                        continue
                    pending.discard(tp)
                    part_code = ErrorCode.of(part.error_code)
                    if part_code != ErrorCode.NONE:
                        errors[tp] = KafkaError(part_code, f"delete the offset of {tp} in group {group_id!r}")

        self._retry("delete_group_offsets", attempt, deadline)
        if errors:
            raise AdminError("delete_group_offsets", errors)

    # --- deleting groups ------------------------------------------------------------------------

    def delete_groups(self, group_ids: Iterable[str], deadline: float) -> None:
        pending = set(group_ids)
        errors: dict[Any, KafkaError] = {}

        def attempt(deadline: float) -> None:
            retry: KafkaError | None = None
            for node, groups in self._by_coordinator(sorted(pending), deadline).items():
                _, response = self._network.request(
                    node, ApiKey.DELETE_GROUPS, DeleteGroupsRequest(groups_names=groups), deadline=deadline
                )
                for result in response.results:
                    if result.group_id not in pending:
                        continue
                    code = ErrorCode.of(result.error_code)
                    if code in _COORDINATOR_MOVED:
                        retry = KafkaError(code, f"delete group {result.group_id!r}")
                        continue
                    pending.discard(result.group_id)
                    if code != ErrorCode.NONE:
                        errors[result.group_id] = KafkaError(code, _delete_failure(result.group_id, code))
            if retry is not None:
                raise retry

        self._retry("delete_groups", attempt, deadline)
        if errors:
            raise AdminError("delete_groups", errors)


def _as_committed(value: OffsetAndMetadata | int) -> OffsetAndMetadata:
    return value if isinstance(value, OffsetAndMetadata) else OffsetAndMetadata(int(value))


def _commit_failure(group_id: str, tp: TopicPartition, code: ErrorCode) -> str:
    if code in _GROUP_HAS_MEMBERS:
        return f"group {group_id!r} has active members; its offsets can be altered only while it is empty"
    return f"commit the offset of {tp} for group {group_id!r}"


def _delete_failure(group_id: str, code: ErrorCode) -> str:
    if code == ErrorCode.NON_EMPTY_GROUP:
        return f"group {group_id!r} has active members; it can be deleted only while it is empty"
    if code == ErrorCode.GROUP_ID_NOT_FOUND:
        return f"group {group_id!r} does not exist"
    return f"delete group {group_id!r}"


def _description(described: Any, coordinator: BrokerDescription | None) -> GroupDescription:
    is_consumer = described.protocol_type == CONSUMER_PROTOCOL_TYPE
    members = []
    for member in described.members:
        assignment: tuple[TopicPartition, ...] = ()
        if is_consumer:
            try:
                assignment = decode_assignment(bytes(member.member_assignment or b""))
            except ProtocolDecodeError:
                assignment = ()  # a member with a custom assignor format: nothing we can show
        members.append(
            MemberDescription(
                member_id=member.member_id,
                client_id=member.client_id,
                host=member.client_host,
                group_instance_id=member.group_instance_id,
                assignment=assignment,
            )
        )
    return GroupDescription(
        group_id=described.group_id,
        state=described.group_state,
        protocol_type=described.protocol_type,
        protocol=described.protocol_data,
        members=tuple(sorted(members, key=lambda m: m.member_id)),
        coordinator=coordinator,
    )
