"""OffsetFetch: a group's committed offsets; -1 where it has none.

v1 reports a group-level failure on every partition; v2+ has a top-level
error code, and a null topic list asks for everything the group committed.
v7+ passes ``require_stable`` to the coordinator (a partition with a pending
transactional commit answers UNSTABLE_OFFSET_COMMIT). v8+ asks for several
groups at once, each answered in its own entry with its own error code.
The member id and epoch of v9 belong to KIP-848 consumer groups, whose
coordinator checks them (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH); a classic
group does not check them, as Kafka's classic coordinator does not.
With an authorizer a group needs Describe (else GROUP_AUTHORIZATION_FAILED)
and each topic Describe: a named topic without it answers
TOPIC_AUTHORIZATION_FAILED, and "all topics" leaves it out.
"""

from __future__ import annotations

from typing import Any

from broker_core.coordinator.group.results import FetchedOffset
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.offset_fetch import BATCHED_GROUPS_FROM_VERSION, OffsetFetchResponse
from spate.structs import TopicPartition, group_by_topic

R = OffsetFetchResponse
TOP_LEVEL_ERROR_FROM_VERSION = 2


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    if request.api_version >= BATCHED_GROUPS_FROM_VERSION:
        groups = [_group(ctx, request, group, body.require_stable) for group in body.groups]
        return R(throttle_time_ms=0, groups=groups)
    offsets, error = _fetch(ctx, request, body.group_id, body.topics, body.require_stable)
    top_level = request.api_version >= TOP_LEVEL_ERROR_FROM_VERSION
    if error != ErrorCode.NONE:
        # v1 has no top-level error: every asked-for partition carries it.
        failed = FetchedOffset(error=error)
        offsets = {} if top_level else {tp: failed for tp in _wanted(body.topics) or ()}
    by_topic = _by_topic(offsets, R.OffsetFetchResponsePartition)
    return R(
        throttle_time_ms=0,
        topics=[R.OffsetFetchResponseTopic(name=name, partitions=partitions) for name, partitions in by_topic.items()],
        error_code=error if top_level else ErrorCode.NONE,
    )


def _group(ctx: BrokerContext, request: Request, group: Any, require_stable: bool) -> Any:
    error = ctx.group_coordinator.consumer_groups.validate_offset_fetch(group.group_id, group.member_id,
                                                                        group.member_epoch)
    if error is not ErrorCode.NONE:
        return R.OffsetFetchResponseGroup(group_id=group.group_id, error_code=error)
    offsets, error = _fetch(ctx, request, group.group_id, group.topics, require_stable)
    by_topic = _by_topic(offsets, R.OffsetFetchResponsePartitions)
    return R.OffsetFetchResponseGroup(
        group_id=group.group_id,
        topics=[R.OffsetFetchResponseTopics(name=name, partitions=partitions) for name, partitions in by_topic.items()],
        error_code=error,
    )


def _wanted(topics: list[Any] | None) -> list[TopicPartition] | None:
    if topics is None:
        return None
    return [TopicPartition(t.name, p) for t in topics for p in t.partition_indexes]


def _fetch(
    ctx: BrokerContext, request: Request, group_id: str, topics: list[Any] | None, require_stable: bool
) -> tuple[dict[TopicPartition, FetchedOffset], ErrorCode]:
    if not acl_checks.group(ctx, request, acl_checks.Op.DESCRIBE, group_id):
        return {}, ErrorCode.GROUP_AUTHORIZATION_FAILED
    result = ctx.group_coordinator.fetch_offsets(
        group_id=group_id, partitions=_wanted(topics), require_stable=require_stable
    )
    if result.error != ErrorCode.NONE:
        return {}, result.error
    return _authorized(ctx, request, dict(result.offsets), listed=topics is not None), ErrorCode.NONE


def _authorized(ctx: BrokerContext, request: Request, offsets: dict[TopicPartition, FetchedOffset],
                listed: bool) -> dict[TopicPartition, FetchedOffset]:
    """Topics without Describe: TOPIC_AUTHORIZATION_FAILED when named, left out when all were asked for."""
    refused = acl_checks.refused_topics(ctx, request, acl_checks.Op.DESCRIBE, {tp.topic for tp in offsets})
    if not refused:
        return offsets
    if not listed:
        return {tp: fetched for tp, fetched in offsets.items() if tp.topic not in refused}
    denied = FetchedOffset(error=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    return {tp: denied if tp.topic in refused else fetched for tp, fetched in offsets.items()}


def _by_topic(offsets: dict[TopicPartition, FetchedOffset], partition_cls: Any) -> dict[str, list[Any]]:
    def partition(tp: TopicPartition, fetched: FetchedOffset) -> Any:
        return partition_cls(
            partition_index=tp.partition,
            committed_offset=fetched.offset,
            committed_leader_epoch=fetched.leader_epoch,
            metadata=fetched.metadata,
            error_code=fetched.error,
        )

    return group_by_topic(offsets.items(), key=lambda item: item[0], value=lambda item: partition(*item))
