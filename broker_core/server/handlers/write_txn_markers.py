"""WriteTxnMarkers: another broker's transaction coordinator ends a transaction on partitions led here.

Each marker entry (producer id and epoch, commit or abort, coordinator
epoch) is appended to each named partition this broker leads, through the
same path as the markers of this broker's own coordinator, and answered once
every in-sync replica holds it (REQUEST_TIMED_OUT otherwise, which the
coordinator retries). Every partition
gets its own code: NOT_LEADER_OR_FOLLOWER or UNKNOWN_TOPIC_OR_PARTITION when
it is not led here, INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED
when the partition has seen a newer producer or coordinator. A marker that
lands in ``__consumer_offsets`` also ends the transaction's pending offsets
in this broker's group coordinator.
"""

from __future__ import annotations

import asyncio
from typing import Any

from broker_core.coordinator.transaction.txn_markers import MarkerRequest
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from broker_core.server.handlers.partition_lookup import leader_partition
from broker_core.server.replication_barrier import until_replicated
from broker_core.server.txn_marker_writer import OffsetsMarkerListener, write_local_marker
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.write_txn_markers import WriteTxnMarkersResponse

R = WriteTxnMarkersResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    on_offsets_marker = _offsets_listener(ctx)
    codes: dict[tuple[int, str, int], ErrorCode] = {}
    refusal = acl_checks.cluster_refusal(ctx, request, acl_checks.Op.CLUSTER_ACTION)
    for marker in request.body.markers if refusal is None else ():
        ending = MarkerRequest(marker.producer_id, marker.producer_epoch, marker.coordinator_epoch,
                               commit=marker.transaction_result)
        for topic in marker.topics:
            for index in topic.partition_indexes:
                codes[(marker.producer_id, topic.name, index)] = _write(ctx, ending, topic.name, index,
                                                                         on_offsets_marker)
    # A marker is done once every in-sync replica holds it: the coordinator then writes Complete*, and a
    # marker lost with its leader would leave the transaction open on that partition for good.
    written = sorted({(name, index) for (_, name, index), code in codes.items() if code == ErrorCode.NONE})
    timeout_ms = ctx.config.get_int("request.timeout.ms")
    settled = await asyncio.gather(*(until_replicated(ctx.replicas, *tp, timeout_ms) for tp in written))
    replicated = dict(zip(written, settled))
    final = {key: replicated[key[1:]] if code == ErrorCode.NONE else code for key, code in codes.items()}
    if refusal is not None:
        final = {(m.producer_id, t.name, i): refusal for m in request.body.markers for t in m.topics
                 for i in t.partition_indexes}
    results = [
        R.WritableTxnMarkerResult(
            producer_id=marker.producer_id,
            topics=[
                R.WritableTxnMarkerTopicResult(
                    name=topic.name,
                    partitions=[
                        R.WritableTxnMarkerPartitionResult(
                            partition_index=index, error_code=final[(marker.producer_id, topic.name, index)]
                        )
                        for index in topic.partition_indexes
                    ],
                )
                for topic in marker.topics
            ],
        )
        for marker in request.body.markers
    ]
    return R(markers=results)


def _write(ctx: BrokerContext, ending: MarkerRequest, topic: str, index: int,
           on_offsets_marker: OffsetsMarkerListener | None) -> ErrorCode:
    try:
        partition = leader_partition(ctx, topic, index)
        write_local_marker(ctx.replicas, partition, ending, timestamp_ms=ctx.clock(),
                           on_offsets_marker=on_offsets_marker)
    except Exception as exc:
        return error_code_for(exc, where="write_txn_markers")
    return ErrorCode.NONE


def _offsets_listener(ctx: BrokerContext) -> OffsetsMarkerListener | None:
    groups = ctx.group_coordinator
    if groups is None:
        return None
    return lambda partition, producer_id, commit: groups.complete_transactional_offsets(
        offsets_partition=partition, producer_id=producer_id, commit=commit
    )
