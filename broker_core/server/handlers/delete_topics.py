"""DeleteTopics: in a cluster the answer waits (up to ``timeout_ms``) until the topic is gone."""

from __future__ import annotations

from typing import Any

from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.messages.delete_topics import DeleteTopicsResponse

R = DeleteTopicsResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    names = list(request.body.topic_names)
    outcomes = await ctx.admin.delete_topics(names, timeout_ms=request.body.timeout_ms)
    results = [R.DeletableTopicResult(name=name, error_code=code) for name, (code, _) in zip(names, outcomes)]
    return R(throttle_time_ms=0, responses=results)
