"""CreatePartitions: grow a topic to ``count`` partitions."""

from __future__ import annotations

from typing import Any

from broker_core.server.context import BrokerContext
from broker_core.server.errors import error_code_for
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.create_partitions import CreatePartitionsResponse

R = CreatePartitionsResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    results = []
    for topic in body.topics:
        assignment = None if topic.assignments is None else [a.broker_ids for a in topic.assignments]
        try:
            ctx.topics.create_partitions(topic.name, topic.count, assignment, validate_only=body.validate_only)
        except Exception as exc:
            results.append(
                R.CreatePartitionsTopicResult(
                    name=topic.name, error_code=error_code_for(exc, where="create_partitions"), error_message=str(exc)
                )
            )
        else:
            results.append(R.CreatePartitionsTopicResult(name=topic.name, error_code=ErrorCode.NONE))
    return R(throttle_time_ms=0, results=results)
