"""LeaderAndIsr: the controller says which partitions this broker leads and follows (see ``replica_state_changes``)."""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.messages.leader_and_isr import LeaderAndIsrResponse

R = LeaderAndIsrResponse
TOPIC_IDS_FROM = 5


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    refusal = acl_checks.cluster_refusal(ctx, request, acl_checks.Op.CLUSTER_ACTION)
    if refusal is not None:
        return R(error_code=refusal, partition_errors=[], topics=[])
    outcome = await ctx.state_changes.become_leader_or_follower(body)
    if request.api_version < TOPIC_IDS_FROM:
        errors = [
            R.LeaderAndIsrPartitionError(topic_name=tp.topic, partition_index=tp.partition, error_code=code)
            for tp, code in outcome.partitions.items()
        ]
        return R(error_code=outcome.error, partition_errors=errors)
    topic_ids = {topic.topic_name: topic.topic_id for topic in body.topic_states}
    by_topic: dict[str, list[Any]] = {}
    for tp, code in outcome.partitions.items():
        by_topic.setdefault(tp.topic, []).append(
            R.LeaderAndIsrPartitionError(partition_index=tp.partition, error_code=code)
        )
    topics = [R.LeaderAndIsrTopicError(topic_id=topic_ids[name], partition_errors=errors)
              for name, errors in by_topic.items()]
    return R(error_code=outcome.error, topics=topics)
