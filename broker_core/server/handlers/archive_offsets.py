"""ArchiveOffsets: describe a partition for an archive job, and record how far its Delta archive reaches.

Answered by any replica of a partition, so that every replica learns the
archived offset (it is checkpointed per log dir, ``archive-offset-checkpoint``)
and a follower that becomes leader keeps refusing to delete unarchived
segments. Each partition is answered on its own. Refusals carry their
reason in ``error_message``: INVALID_CONFIG when the topic sets no
``spate.archive.path``, OFFSET_OUT_OF_RANGE for an archived offset beyond
the leader's high watermark (or a follower's log end), INVALID_REQUEST for a
negative one, KAFKA_STORAGE_ERROR when the checkpoint cannot be written, and
the usual NOT_LEADER_OR_FOLLOWER / UNKNOWN_TOPIC_OR_PARTITION when this
broker has no replica.
"""

from __future__ import annotations

from typing import Any

from broker_core.replication.partition import Partition
from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from broker_core.server.handlers.partition_lookup import leader_partition
from broker_core.storage.files import TopicPartition
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode, KafkaError
from spate.protocol.messages.archive_offsets import DESCRIBE_ONLY, NO_OFFSET, ArchiveOffsetsResponse

R = ArchiveOffsetsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    topics = []
    for topic in request.body.topics:
        answers = [_partition(ctx, topic.name, wanted) for wanted in topic.partitions]
        topics.append(R.ArchiveOffsetsTopicResult(name=topic.name, partitions=answers))
    return R(throttle_time_ms=0, topics=topics)


def _partition(ctx: BrokerContext, topic: str, wanted: Any) -> Any:
    index = wanted.partition_index
    partition: Partition | None = None
    try:
        partition = _hosted(ctx, topic, index)
        if wanted.archived_offset != DESCRIBE_ONLY:
            _record(ctx, partition, TopicPartition(topic, index), wanted.archived_offset)
        return _answer(ctx, index, partition)
    except Exception as exc:
        code = error_code_for(exc, where="archive_offsets")
        message = exc.message if isinstance(exc, KafkaError) else str(exc)
        try:
            return _answer(ctx, index, partition, error=(code, message))
        except Exception:  # noqa: BLE001 - the log cannot be described either (its dir failed): the error alone
            return _answer(ctx, index, None, error=(code, message))


def _hosted(ctx: BrokerContext, topic: str, index: int) -> Partition:
    hosted = ctx.replicas.hosted(topic, index)
    if hosted is None:
        return leader_partition(ctx, topic, index)  # raises the error that says why
    return hosted


def _is_leader(ctx: BrokerContext, partition: Partition) -> bool:
    return ctx.replicas.is_leader(partition.topic, partition.index) and partition.is_leader


def _record(ctx: BrokerContext, partition: Partition, tp: TopicPartition, offset: int) -> None:
    config = partition.log.config
    if not config.archiving:
        raise KafkaError(ErrorCode.INVALID_CONFIG, f"topic {tp.topic!r} sets no spate.archive.path, so it keeps "
                         "no archive; set it before reporting archived offsets")
    if offset < 0:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"archived offset {offset} of {tp} is negative")
    leader = _is_leader(ctx, partition)
    limit = partition.high_watermark if leader else partition.log.log_end_offset
    if offset > limit:
        what = "high watermark" if leader else "log end offset on this follower"
        raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE,
                         f"archived offset {offset} of {tp} is beyond its {what} ({limit})")
    ctx.replicas.log_manager.record_archived_offset(tp, offset)


def _answer(ctx: BrokerContext, index: int, partition: Partition | None,
            error: tuple[ErrorCode, str | None] = (ErrorCode.NONE, None)) -> Any:
    code, message = error
    if partition is None:
        return R.ArchiveOffsetsPartitionResult(
            partition_index=index, error_code=code, error_message=message, is_leader=False, log_start_offset=-1,
            high_watermark=-1, last_stable_offset=-1, archived_offset=NO_OFFSET, archive_target_offset=-1,
            archive_path=None,
        )
    log = partition.log
    stable = partition.last_stable_offset
    target = log.local_log.retention_target(ctx.clock(), high_watermark=partition.high_watermark)
    archived = ctx.replicas.log_manager.archived_offset(TopicPartition(partition.topic, partition.index))
    return R.ArchiveOffsetsPartitionResult(
        partition_index=index, error_code=code, error_message=message, is_leader=_is_leader(ctx, partition),
        log_start_offset=log.log_start_offset, high_watermark=partition.high_watermark, last_stable_offset=stable,
        archived_offset=NO_OFFSET if archived is None else archived,
        archive_target_offset=min(target, stable), archive_path=log.config.spate_archive_path,
    )
