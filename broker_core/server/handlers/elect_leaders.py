"""ElectLeaders: hand partitions back to their preferred (first) replica.

A null partition list means every partition; the answer then names only the
partitions that needed an election or failed one, as Kafka's does. Unclean
elections are the controller's own decision (``unclean.leader.election.enable``),
so an UNCLEAN request is refused.
"""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.elect_leaders import ELECTION_PREFERRED, ElectLeadersResponse
from spate.structs import TopicPartition, group_by_topic

R = ElectLeadersResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    refusal = acl_checks.cluster_refusal(ctx, request, acl_checks.Op.ALTER)
    if refusal is not None:
        return R(throttle_time_ms=0, error_code=refusal, replica_election_results=[])
    if body.election_type != ELECTION_PREFERRED:
        return R(throttle_time_ms=0, error_code=ErrorCode.INVALID_REQUEST, replica_election_results=[])
    partitions = None
    if body.topic_partitions is not None:
        partitions = [TopicPartition(t.topic, p) for t in body.topic_partitions for p in t.partitions]
    results = await ctx.admin.elect_preferred_leaders(partitions, timeout_ms=body.timeout_ms)
    by_topic = group_by_topic(
        results.items(),
        key=lambda item: item[0],
        value=lambda item: R.PartitionResult(partition_id=item[0].partition, error_code=item[1][0],
                                             error_message=item[1][1]),
    )
    topics = [R.ReplicaElectionResult(topic=topic, partition_result=entries) for topic, entries in by_topic.items()]
    return R(throttle_time_ms=0, error_code=ErrorCode.NONE, replica_election_results=topics)
