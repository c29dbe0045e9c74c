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
from typing import Any, Iterable, Mapping

from spate.client.admin.admin_types import BrokerDescription, GroupDescription, GroupListing, MemberDescription
from spate.client.commit_offsets import offsets_to_commit, partition_error_codes
from spate.client.consumer.consumer_protocol import (  # noqa: F401  (encode_assignment: re-exported)
    CONSUMER_PROTOCOL_TYPE,
    decode_assignment,
    encode_assignment,
)
from spate.client.consumer.group_metadata import NO_GENERATION, NO_MEMBER_ID
from spate.client.consumer.offset_commit import offset_commit_body
from spate.client.errors import AdminError
from spate.client.net.find_coordinator import CoordinatorKey, find_coordinator
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import KeyedCall, Retrier
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.errors import ProtocolDecodeError
from spate.protocol.messages.delete_groups import DeleteGroupsRequest
from spate.protocol.messages.describe_groups import DescribeGroupsRequest
from spate.protocol.messages.list_groups import ListGroupsRequest
from spate.protocol.messages.offset_delete import OffsetDeleteRequest
from spate.protocol.messages.offset_fetch import OffsetFetchRequest
from spate.structs import OffsetAndMetadata, TopicPartition, group_by_topic

# What the coordinator answers a commit from outside a group that has members.
_GROUP_HAS_MEMBERS = frozenset(
    {ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION, ErrorCode.REBALANCE_IN_PROGRESS}
)
_COORDINATOR_MOVED = frozenset(
    {ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}
)


class GroupAdmin:
    """The group half of the admin client; ``retrier`` is the admin's way of retrying."""

    def __init__(self, network: NetworkClient, retrier: Retrier) -> None:
        self._network = network
        self._retrier = retrier

    def coordinator(self, group_id: str, deadline: float) -> int:
        """The node id of the group's coordinator; retriable KafkaError while there is none."""
        return find_coordinator(self._network, CoordinatorKey.group(group_id), deadline)

    def _by_coordinator(self, group_ids: Iterable[str], deadline: float) -> dict[int, list[str]]:
        nodes: dict[int, list[str]] = defaultdict(list)
        for group_id in group_ids:
            nodes[self.coordinator(group_id, deadline)].append(group_id)
        return nodes

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

        return self._retrier.call("list_groups", attempt, deadline)

    def describe_groups(self, group_ids: Iterable[str], deadline: float) -> dict[str, GroupDescription]:
        wanted = list(dict.fromkeys(group_ids))
        call: KeyedCall[str] = KeyedCall({g: g for g in wanted})

        def attempt(deadline: float) -> None:
            for node, groups in self._by_coordinator(list(call.pending), deadline).items():
                _, response = self._network.request(
                    node, ApiKey.DESCRIBE_GROUPS, DescribeGroupsRequest(groups=groups), deadline=deadline
                )
                coordinator = self._network.node(node)
                for described in response.groups:
                    call.settle(
                        described.group_id,
                        ErrorCode.of(described.error_code),
                        f"describe group {described.group_id!r}",
                        retry_on=_COORDINATOR_MOVED,
                        result=lambda: _description(described, coordinator),
                    )

        results = self._retrier.call_each("describe_groups", call, attempt, deadline).results
        return {g: results[g] for g in wanted}

    # --- offsets --------------------------------------------------------------------------------

    def list_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None, deadline: float
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        wanted = None if partitions is None else sorted(set(partitions))

        def attempt(deadline: float) -> tuple[dict[TopicPartition, OffsetAndMetadata], dict[Any, KafkaError]]:
            node = self.coordinator(group_id, deadline)
            topics = None
            if wanted is not None:
                topics = [
                    OffsetFetchRequest.OffsetFetchRequestTopic(name=name, partition_indexes=numbers)
                    for name, numbers in group_by_topic(wanted, value=lambda tp: tp.partition).items()
                ]
            # A null topic list ("every partition") needs v2.
            _, response = self._network.request(
                node, ApiKey.OFFSET_FETCH, OffsetFetchRequest(group_id=group_id, topics=topics),
                deadline=deadline, min_version=2,
            )
            return _committed_offsets(group_id, response)

        offsets, errors = self._retrier.call("list_group_offsets", attempt, deadline)
        if errors:
            raise AdminError("list_group_offsets", errors)
        return offsets

    def alter_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, OffsetAndMetadata | int], deadline: float
    ) -> None:
        call: KeyedCall[TopicPartition] = KeyedCall(offsets_to_commit(offsets))

        def attempt(deadline: float) -> None:
            node = self.coordinator(group_id, deadline)
            body = offset_commit_body(group_id, NO_GENERATION, NO_MEMBER_ID, None, call.pending)
            _, response = self._network.request(node, ApiKey.OFFSET_COMMIT, body, deadline=deadline)
            for tp, code in partition_error_codes(response).items():
                if tp not in call:
                    continue
                if code == ErrorCode.NONE:
                    call.succeed(tp)
                elif code in _COORDINATOR_MOVED:
                    call.retry(KafkaError(code, f"commit the offset of {tp} for group {group_id!r}"))
                else:
                    call.fail(tp, KafkaError(code, _commit_failure(group_id, tp, code)))

        self._retrier.call_each("alter_group_offsets", call, attempt, deadline)

    def delete_group_offsets(self, group_id: str, partitions: Iterable[TopicPartition], deadline: float) -> None:
        call: KeyedCall[TopicPartition] = KeyedCall({tp: tp for tp in partitions})

        def attempt(deadline: float) -> None:
            node = self.coordinator(group_id, deadline)
            by_topic = group_by_topic(
                sorted(call.pending),
                value=lambda tp: OffsetDeleteRequest.OffsetDeleteRequestPartition(partition_index=tp.partition),
            )
            body = OffsetDeleteRequest(
                group_id=group_id,
                topics=[OffsetDeleteRequest.OffsetDeleteRequestTopic(name=n, partitions=p) for n, p in by_topic.items()],
            )
            _, response = self._network.request(node, ApiKey.OFFSET_DELETE, body, deadline=deadline)
            code = ErrorCode.of(response.error_code)
            if code in _COORDINATOR_MOVED:
                raise KafkaError(code, f"delete offsets of group {group_id!r}")
            if code != ErrorCode.NONE:
                call.fail_rest(group_id, KafkaError(code, f"delete offsets of group {group_id!r}"))
                return
            for tp, part_code in partition_error_codes(response).items():
                call.settle(tp, part_code, f"delete the offset of {tp} in group {group_id!r}")

        self._retrier.call_each("delete_group_offsets", call, attempt, deadline)

    # --- deleting groups ------------------------------------------------------------------------

    def delete_groups(self, group_ids: Iterable[str], deadline: float) -> None:
        call: KeyedCall[str] = KeyedCall({g: g for g in group_ids})

        def attempt(deadline: float) -> None:
            for node, groups in self._by_coordinator(sorted(call.pending), deadline).items():
                _, response = self._network.request(
                    node, ApiKey.DELETE_GROUPS, DeleteGroupsRequest(groups_names=groups), deadline=deadline
                )
                for result in response.results:
                    code = ErrorCode.of(result.error_code)
                    if result.group_id not in call:
                        continue
                    if code in _COORDINATOR_MOVED:
                        call.retry(KafkaError(code, f"delete group {result.group_id!r}"))
                    elif code == ErrorCode.NONE:
                        call.succeed(result.group_id)
                    else:
                        call.fail(result.group_id, KafkaError(code, _delete_failure(result.group_id, code)))

        self._retrier.call_each("delete_groups", call, attempt, deadline)


def _committed_offsets(
    group_id: str, response: Any
) -> tuple[dict[TopicPartition, OffsetAndMetadata], dict[Any, KafkaError]]:
    """An OffsetFetch answer: the committed offsets (sorted) and the partitions refused; retriable errors raise."""
    code = ErrorCode.of(response.error_code)
    if code != ErrorCode.NONE:
        raise KafkaError(code, f"fetch the offsets of group {group_id!r}")
    offsets: dict[TopicPartition, OffsetAndMetadata] = {}
    errors: dict[Any, KafkaError] = {}
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
    return dict(sorted(offsets.items())), errors


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
