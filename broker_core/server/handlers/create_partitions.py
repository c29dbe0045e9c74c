"""CreatePartitions: grow a topic to ``count``; in a cluster the answer waits for the new leaders.

The new count is checked against the partition limits before anything is
placed or written, as CreateTopics checks a new topic's.
"""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.topic_admin import PartitionsRequest
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.create_partitions import CreatePartitionsResponse

R = CreatePartitionsResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    refused = acl_checks.refused_topics(ctx, request, acl_checks.Op.ALTER, (topic.name for topic in body.topics))
    requests = [
        PartitionsRequest(
            topic.name, topic.count, None if topic.assignments is None else [a.broker_ids for a in topic.assignments]
        )
        for topic in body.topics if topic.name not in refused
    ]
    allowed = iter(await ctx.admin.create_partitions(requests, validate_only=body.validate_only,
                                                     timeout_ms=body.timeout_ms) if requests else ())
    outcomes = [(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None) if topic.name in refused else next(allowed)
                for topic in body.topics]
    results = [
        R.CreatePartitionsTopicResult(name=topic.name, error_code=code, error_message=message)
        for topic, (code, message) in zip(body.topics, outcomes)
    ]
    return R(throttle_time_ms=0, results=results)
