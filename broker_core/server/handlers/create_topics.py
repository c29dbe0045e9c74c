"""CreateTopics: each topic validated and created on its own; errors per topic."""

from __future__ import annotations

from typing import Any

from broker_core.server.context import BrokerContext
from broker_core.server.errors import outcome
from broker_core.server.topic_manager import TopicRequest
from spate.protocol.connection import Request
from spate.protocol.messages.create_topics import CreateTopicsResponse

R = CreateTopicsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    results = []
    for topic in body.topics:
        topic_request = TopicRequest(
            name=topic.name,
            num_partitions=topic.num_partitions,
            replication_factor=topic.replication_factor,
            assignment={a.partition_index: a.broker_ids for a in topic.assignments} or None,
            configs={c.name: c.value for c in topic.configs},
        )
        code, message = outcome(
            ctx.topics.create_topic, topic_request, validate_only=body.validate_only, where="create_topics"
        )
        results.append(R.CreatableTopicResult(name=topic.name, error_code=code, error_message=message))
    return R(throttle_time_ms=0, topics=results)
