"""Produce: validate batch headers, check idempotence, append.

Records are decoded only for a compacted topic, whose records must have
keys: a batch with keyless records is refused with INVALID_RECORD and, from
v8, the index of each such record in ``record_errors`` (librdkafka fails
those records with INVALID_RECORD and the rest of the batch as retriable).
From v8 a failed partition also carries an error message. Before v3 the
records are a legacy message set, converted first (:mod:`message_format`).

``acks`` says when the answer goes out: 0 never (the connection sends
nothing), 1 once the leader appended, -1 (all) once every in-sync replica
holds the records, i.e. the high watermark passed them. An acks=all append is
refused before anything is written while the ISR is smaller than
``min.insync.replicas`` (NOT_ENOUGH_REPLICAS); otherwise the answer waits in
the purgatory (:class:`DelayedProduce`) for at most the request's
``timeout_ms``. With one replica the high watermark moves with the append, so
nothing waits.

With an authorizer, a transactional producer needs Write on its
transactional id (else every partition: TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
and every producer Write on each topic (else TOPIC_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from broker_core.cluster.topic_names import is_internal_topic
from broker_core.replication.partition import ACKS_ALL
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.delayed_produce import DelayedProduce, ProducePartitionStatus
from broker_core.server.errors import error_code_for
from broker_core.server.handlers import message_format
from broker_core.server.handlers.partition_lookup import leader_partition
from broker_core.storage.errors import InvalidRecordsError, StorageError
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode, KafkaError
from spate.protocol.messages.produce import ProduceResponse

R = ProduceResponse
VALID_ACKS = (0, 1, ACKS_ALL)


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    refused = _refusals(ctx, request) if acl_checks.enabled(ctx) else {}
    topics = [
        (topic_data.name, [
            _append(ctx, body.acks, topic_data.name, data.index, data.records, request.api_version)
            if topic_data.name not in refused
            else ProducePartitionStatus(topic_data.name, data.index, refused[topic_data.name])
            for data in topic_data.partition_data
        ])
        for topic_data in body.topic_data
    ]  # fmt: skip
    waiting = [status for _, statuses in topics for status in statuses if status.acks_pending]
    if not waiting:
        return _response(topics)
    delayed = DelayedProduce(waiting, ctx.replicas.get, offline=ctx.replicas.is_offline)
    if delayed.try_complete():
        return _response(topics)
    return _await_replication(ctx, delayed, body.timeout_ms, topics)


def _refusals(ctx: BrokerContext, request: Request) -> dict[str, ErrorCode]:
    body, write = request.body, acl_checks.Op.WRITE
    transactional_id = getattr(body, "transactional_id", None)
    if transactional_id is not None and not acl_checks.transactional_id(ctx, request, write, transactional_id):
        return {t.name: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED for t in body.topic_data}
    return {t.name: ErrorCode.TOPIC_AUTHORIZATION_FAILED for t in body.topic_data
            if not acl_checks.topic(ctx, request, write, t.name)}


async def _await_replication(
    ctx: BrokerContext, delayed: DelayedProduce, timeout_ms: int, topics: list[tuple[str, list[ProducePartitionStatus]]]
) -> Any:
    await delayed.wait(ctx.replicas.purgatory, timeout_ms)
    return _response(topics)


def _append(
    ctx: BrokerContext, acks: int, topic: str, index: int, records: Any, api_version: int
) -> ProducePartitionStatus:
    try:
        if acks not in VALID_ACKS:
            raise KafkaError(ErrorCode.INVALID_REQUIRED_ACKS, f"acks must be 0, 1 or -1, not {acks}")
        if is_internal_topic(topic):
            raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"clients may not produce to internal topic {topic}")
        partition = leader_partition(ctx, topic, index)
        if records is None:
            raise KafkaError(ErrorCode.INVALID_RECORD, "produce request without records")
        records = message_format.produced_records(records, api_version)
        result = partition.append_records(records, required_acks=acks)
    except InvalidRecordsError as exc:
        return ProducePartitionStatus(topic, index, ErrorCode.INVALID_RECORD, error_message=str(exc),
                                      record_errors=exc.record_errors)
    except Exception as exc:
        # Kafka's and the log's refusals describe the request; an unexpected error's text stays in the log.
        message = exc.message if isinstance(exc, KafkaError) else str(exc) if isinstance(exc, StorageError) else None
        return ProducePartitionStatus(topic, index, error_code_for(exc, where="produce"), error_message=message)
    if not result.duplicate:
        ctx.replicas.notify_append(partition)
        if ctx.metrics is not None:
            ctx.metrics.topics.record_produce(topic, result.last_offset - result.base_offset + 1, len(records))
    return ProducePartitionStatus(
        topic,
        index,
        ErrorCode.NONE,
        base_offset=result.base_offset,
        log_append_time=result.log_append_time,
        log_start_offset=result.log_start_offset,
        required_offset=result.last_offset + 1,
        acks_pending=acks == ACKS_ALL,
    )


def _response(topics: list[tuple[str, list[ProducePartitionStatus]]]) -> Any:
    return R(
        responses=[
            R.TopicProduceResponse(
                name=name,
                partition_responses=[
                    R.PartitionProduceResponse(
                        index=status.index,
                        error_code=status.error,
                        base_offset=status.base_offset,
                        log_append_time_ms=status.log_append_time,
                        log_start_offset=status.log_start_offset,
                        record_errors=[
                            R.BatchIndexAndErrorMessage(batch_index=i, batch_index_error_message=message)
                            for i, message in status.record_errors
                        ],
                        error_message=status.error_message,
                    )
                    for status in statuses
                ],
            )
            for name, statuses in topics
        ],
        throttle_time_ms=0,
    )
