"""ListOffsets: earliest (-2), latest (-1) and by timestamp.

A client (``replica_id`` -1) sees only what it may fetch: latest is the high
watermark (the LSO under read_committed), and a timestamp lookup never
answers an offset at or past it. A follower (``replica_id`` >= 0) is told
the log end offset. Right after a leader change the new leader's high
watermark may still be below where its epoch began; until it gets there,
latest and lookups past the high watermark answer OFFSET_NOT_AVAILABLE (the
client retries) rather than an offset that could go back.

From version 4 each partition names the leader epoch the client knows
(KIP-320): an older one is FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH.

From version 7, -3 asks for the record with the largest timestamp (KIP-734),
answered like a timestamp lookup (never at or past what the client may
fetch); from 8, -4 for the earliest offset in local storage, which without
tiered storage is the log start offset; from 9, -5 for the latest tiered
offset, which without tiered storage is -1, as Kafka answers.

Version 0 answers a list of offsets from the segment files' base offsets and
modification times (:mod:`broker_core.storage.legacy_offsets`), a client's
capped at the high watermark.
"""

from __future__ import annotations

from typing import Any

from broker_core.replication.partition import Partition
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from broker_core.server.handlers.partition_lookup import leader_partition
from broker_core.storage import legacy_offsets
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode, KafkaError
from spate.protocol.messages.list_offsets import (
    EARLIEST_LOCAL_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    MAX_TIMESTAMP,
    ListOffsetsResponse,
)
from spate.structs import IsolationLevel

R = ListOffsetsResponse
LATEST = -1
EARLIEST = -2
NO_TIMESTAMP = -1


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    refused = acl_checks.refused_topics(ctx, request, acl_checks.Op.DESCRIBE, (topic.name for topic in body.topics))
    topics = [
        R.ListOffsetsTopicResponse(
            name=topic.name,
            partitions=[_lookup(ctx, body, topic.name, p, request.api_version) if topic.name not in refused else
                        R.ListOffsetsPartitionResponse(partition_index=p.partition_index,
                                                       error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                        for p in topic.partitions],
        )
        for topic in body.topics
    ]
    return R(throttle_time_ms=0, topics=topics)


def _lookup(ctx: BrokerContext, body: Any, topic: str, wanted: Any, version: int) -> Any:
    index = wanted.partition_index
    try:
        partition = leader_partition(ctx, topic, index, wanted.current_leader_epoch)
        if version == 0:
            offsets = _offsets_before(ctx, partition, wanted, from_client=body.replica_id < 0)
            return R.ListOffsetsPartitionResponse(partition_index=index, error_code=ErrorCode.NONE,
                                                  old_style_offsets=offsets)
        found = _offset(partition, wanted.timestamp, from_client=body.replica_id < 0,
                        committed=body.isolation_level == IsolationLevel.READ_COMMITTED)
    except Exception as exc:
        code = error_code_for(exc, where="list_offsets")
        return R.ListOffsetsPartitionResponse(partition_index=index, error_code=code)
    if found is None:
        return R.ListOffsetsPartitionResponse(partition_index=index, error_code=ErrorCode.NONE)
    timestamp, offset = found
    return R.ListOffsetsPartitionResponse(
        partition_index=index, error_code=ErrorCode.NONE, timestamp=timestamp, offset=offset,
        leader_epoch=partition.leader_epoch,
    )


def _offset(partition: Partition, timestamp: int, *, from_client: bool, committed: bool) -> tuple[int, int] | None:
    """``(timestamp, offset)`` to answer, or None when no record is at or after ``timestamp``."""
    if timestamp in (EARLIEST, EARLIEST_LOCAL_TIMESTAMP):
        return NO_TIMESTAMP, partition.log_start_offset
    if timestamp == LATEST_TIERED_TIMESTAMP:
        return NO_TIMESTAMP, -1
    if not from_client:  # a follower: everything in the log
        if timestamp == LATEST:
            return NO_TIMESTAMP, partition.log_end_offset
        return _max_timestamp(partition) if timestamp == MAX_TIMESTAMP else partition.offset_for_timestamp(timestamp)
    last_fetchable = partition.last_stable_offset if committed else partition.high_watermark
    start = partition.leader_epoch_start_offset
    not_available = start is not None and start > partition.high_watermark
    if timestamp == LATEST:
        if not_available:
            raise _offset_not_available(partition, start)
        return NO_TIMESTAMP, last_fetchable
    found = _max_timestamp(partition) if timestamp == MAX_TIMESTAMP else partition.offset_for_timestamp(timestamp)
    if found is not None and found[1] < last_fetchable:
        return found
    if not_available:
        raise _offset_not_available(partition, start)
    return None


def _offsets_before(ctx: BrokerContext, partition: Partition, wanted: Any, *, from_client: bool) -> list[int]:
    log = partition.log
    offsets = legacy_offsets.offsets_before(log.local_log.segments, log.log_start_offset, log.log_end_offset,
                                            wanted.timestamp, wanted.max_num_offsets, ctx.clock())
    return legacy_offsets.capped_at(offsets, partition.high_watermark) if from_client else offsets


def _max_timestamp(partition: Partition) -> tuple[int, int] | None:
    return partition.log.max_timestamp_and_offset()


def _offset_not_available(partition: Partition, epoch_start: int | None) -> KafkaError:
    return KafkaError(
        ErrorCode.OFFSET_NOT_AVAILABLE,
        f"{partition}: the high watermark {partition.high_watermark} has not reached the start of leader epoch "
        f"{partition.leader_epoch} at {epoch_start} yet",
    )
