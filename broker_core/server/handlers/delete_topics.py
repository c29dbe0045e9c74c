"""DeleteTopics: in a cluster the answer waits (up to ``timeout_ms``) until the topic is gone."""

from __future__ import annotations

from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.delete_topics import DeleteTopicsResponse

R = DeleteTopicsResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    names = list(request.body.topic_names)
    refused = acl_checks.refused_topics(ctx, request, acl_checks.Op.DELETE, names)
    wanted = [name for name in names if name not in refused]
    allowed = iter(await ctx.admin.delete_topics(wanted, timeout_ms=request.body.timeout_ms) if wanted else ())
    outcomes = [(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None) if name in refused else next(allowed) for name in names]
    results = [R.DeletableTopicResult(name=name, error_code=code) for name, (code, _) in zip(names, outcomes)]
    return R(throttle_time_ms=0, responses=results)
