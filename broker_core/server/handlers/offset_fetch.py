"""OffsetFetch: a group's committed offsets; -1 where it has none.

v1 reports a group-level failure on every partition; v2+ has a top-level
error code, and a null topic list asks for everything the group committed.
"""

from __future__ import annotations

from typing import Any

from broker_core.coordinator.group.results import FetchedOffset, OffsetFetchResult
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.offset_fetch import OffsetFetchResponse
from spate.structs import TopicPartition, group_by_topic

R = OffsetFetchResponse
TOP_LEVEL_ERROR_FROM_VERSION = 2


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    wanted = None
    if body.topics is not None:
        wanted = [TopicPartition(t.name, p) for t in body.topics for p in t.partition_indexes]
    top_level = request.api_version >= TOP_LEVEL_ERROR_FROM_VERSION
    if not acl_checks.group(ctx, request, acl_checks.Op.DESCRIBE, body.group_id):
        result = OffsetFetchResult(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    else:
        result = ctx.group_coordinator.fetch_offsets(group_id=body.group_id, partitions=wanted)
    if result.error != ErrorCode.NONE:
        failed = FetchedOffset(error=result.error)
        offsets = {tp: failed for tp in wanted or ()}
        if top_level:
            offsets = {}
    else:
        offsets = _authorized(ctx, request, dict(result.offsets), listed=wanted is not None)
    by_topic = group_by_topic(offsets.items(), key=lambda item: item[0], value=lambda item: _partition(*item))
    return R(
        throttle_time_ms=0,
        topics=[R.OffsetFetchResponseTopic(name=name, partitions=partitions) for name, partitions in by_topic.items()],
        error_code=result.error if top_level else ErrorCode.NONE,
    )


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


def _partition(tp: TopicPartition, fetched: FetchedOffset) -> Any:
    return R.OffsetFetchResponsePartition(
        partition_index=tp.partition,
        committed_offset=fetched.offset,
        committed_leader_epoch=fetched.leader_epoch,
        metadata=fetched.metadata,
        error_code=fetched.error,
    )
