"""DeleteTopics: metadata first, then the partitions' logs."""

from __future__ import annotations

from typing import Any

from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.delete_topics import DeleteTopicsResponse

R = DeleteTopicsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    results = []
    for name in request.body.topic_names:
        try:
            ctx.topics.delete_topic(name)
        except Exception as exc:
            results.append(R.DeletableTopicResult(name=name, error_code=error_code_for(exc, where="delete_topics")))
        else:
            results.append(R.DeletableTopicResult(name=name, error_code=ErrorCode.NONE))
    return R(throttle_time_ms=0, responses=results)
