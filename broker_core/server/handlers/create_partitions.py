"""CreatePartitions: grow a topic to ``count`` partitions."""

from __future__ import annotations

from typing import Any

from broker_core.server.context import BrokerContext
from broker_core.server.errors import outcome
from spate.protocol.connection import Request
from spate.protocol.messages.create_partitions import CreatePartitionsResponse

R = CreatePartitionsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    results = []
    for topic in body.topics:
        assignment = None if topic.assignments is None else [a.broker_ids for a in topic.assignments]
        code, message = outcome(
            ctx.topics.create_partitions, topic.name, topic.count, assignment, validate_only=body.validate_only,
            where="create_partitions",
        )
        results.append(R.CreatePartitionsTopicResult(name=topic.name, error_code=code, error_message=message))
    return R(throttle_time_ms=0, results=results)
