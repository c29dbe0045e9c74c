"""CreateTopics: each topic validated and created on its own; errors per topic.

Every check, the partition limits (``max.partitions``, ``max.broker.partitions``)
included, runs before anything is written; the creation itself yields the
event loop to other clients while it opens logs or writes ZooKeeper. In a
cluster the answer waits (up to the request's ``timeout_ms``) for the new
partitions' leaders; ``validate_only`` checks everything and writes nothing.
"""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.topic_manager import TopicRequest
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.create_topics import CreateTopicsResponse

R = CreateTopicsResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    refused = acl_checks.refused_creations(ctx, request, (topic.name for topic in body.topics))
    requests = [
        TopicRequest(
            name=topic.name,
            num_partitions=topic.num_partitions,
            replication_factor=topic.replication_factor,
            assignment={a.partition_index: a.broker_ids for a in topic.assignments} or None,
            configs={c.name: c.value for c in topic.configs},
        )
        for topic in body.topics if topic.name not in refused
    ]
    allowed = iter(await ctx.admin.create_topics(requests, validate_only=body.validate_only,
                                                 timeout_ms=body.timeout_ms) if requests else ())
    outcomes = [(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None) if topic.name in refused else next(allowed)
                for topic in body.topics]
    results = [
        R.CreatableTopicResult(name=topic.name, error_code=code, error_message=message)
        for topic, (code, message) in zip(body.topics, outcomes)
    ]
    return R(throttle_time_ms=0, topics=results)
