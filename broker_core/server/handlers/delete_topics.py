"""DeleteTopics: in a cluster the answer waits (up to ``timeout_ms``) until the topic is gone.

From v6 a topic may be named by id: an id the broker does not know answers
UNKNOWN_TOPIC_ID, and each result names the topic's name and id. From v5
a failed topic carries its error message. With an authorizer each topic
needs Delete (else TOPIC_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

import uuid
from typing import Any

from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.handlers.topic_ids import topic_id_of, topic_names_by_id
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.delete_topics import TOPIC_IDS_FROM_VERSION, DeleteTopicsResponse
from spate.protocol.types import ZERO_UUID

R = DeleteTopicsResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    if request.api_version < TOPIC_IDS_FROM_VERSION:
        named: list[tuple[str | None, uuid.UUID]] = [(name, ZERO_UUID) for name in body.topic_names]
    else:
        names_by_id = topic_names_by_id(ctx.metadata) if any(t.name is None for t in body.topics) else {}
        named = [(t.name, t.topic_id) if t.name is not None else (names_by_id.get(t.topic_id), t.topic_id)
                 for t in body.topics]
    known = [(name, topic_id if topic_id != ZERO_UUID else topic_id_of(ctx.metadata, name))
             for name, topic_id in named if name is not None]
    refused = acl_checks.refused_topics(ctx, request, acl_checks.Op.DELETE, [name for name, _ in known])
    wanted = [name for name, _ in known if name not in refused]
    deleted = iter(await ctx.admin.delete_topics(wanted, timeout_ms=body.timeout_ms) if wanted else ())
    outcomes = [(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None) if name in refused else next(deleted)
                for name, _ in known]
    results = [R.DeletableTopicResult(name=name, topic_id=topic_id, error_code=code, error_message=message)
               for (name, topic_id), (code, message) in zip(known, outcomes)]
    results += [R.DeletableTopicResult(name=None, topic_id=topic_id, error_code=ErrorCode.UNKNOWN_TOPIC_ID,
                                       error_message=f"no topic has id {topic_id}")
                for name, topic_id in named if name is None]
    return R(throttle_time_ms=0, responses=results)
