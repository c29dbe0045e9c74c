"""DeleteTopics: metadata first, then the partitions' logs."""

from __future__ import annotations

from typing import Any

from broker_core.server.context import BrokerContext
from broker_core.server.errors import outcome
from spate.protocol.connection import Request
from spate.protocol.messages.delete_topics import DeleteTopicsResponse

R = DeleteTopicsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    results = []
    for name in request.body.topic_names:
        code, _ = outcome(ctx.topics.delete_topic, name, where="delete_topics")
        results.append(R.DeletableTopicResult(name=name, error_code=code))
    return R(throttle_time_ms=0, responses=results)
