"""CreateTopics: each topic validated and created on its own; errors per topic."""

from __future__ import annotations

from typing import Any

from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from broker_core.server.topic_manager import TopicRequest
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.create_topics import CreateTopicsResponse

R = CreateTopicsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    results = []
    for topic in body.topics:
        try:
            ctx.topics.create_topic(
                TopicRequest(
                    name=topic.name,
                    num_partitions=topic.num_partitions,
                    replication_factor=topic.replication_factor,
                    assignment={a.partition_index: a.broker_ids for a in topic.assignments} or None,
                    configs={c.name: c.value for c in topic.configs},
                ),
                validate_only=body.validate_only,
            )
        except Exception as exc:
            results.append(
                R.CreatableTopicResult(
                    name=topic.name, error_code=error_code_for(exc, where="create_topics"), error_message=str(exc)
                )
            )
        else:
            results.append(R.CreatableTopicResult(name=topic.name, error_code=ErrorCode.NONE))
    return R(throttle_time_ms=0, topics=results)
