"""CreateTopics: each topic validated and created on its own; errors per topic.

Every check, the partition limits (``max.partitions``, ``max.broker.partitions``)
included, runs before anything is written; the creation itself yields the
event loop to other clients while it opens logs or writes ZooKeeper. In a
cluster the answer waits (up to the request's ``timeout_ms``) for the new
partitions' leaders; ``validate_only`` checks everything and writes nothing.

From v5 a topic created (or that would be) is answered with its partition
count, replication factor and every topic config with its source (KIP-525);
from v7 with its topic id (zero when only validated).
"""

from __future__ import annotations

from typing import Any

from broker_core.config.topic_config import effective_topic_config, validate_topic_configs
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.handlers.topic_ids import topic_id_of
from broker_core.server.topic_manager import TopicRequest
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.create_topics import CreateTopicsResponse

R = CreateTopicsResponse


async def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    refused = acl_checks.refused_creations(ctx, request, (topic.name for topic in body.topics))
    wanted = {
        index: TopicRequest(
            name=topic.name,
            num_partitions=topic.num_partitions,
            replication_factor=topic.replication_factor,
            assignment={a.partition_index: a.broker_ids for a in topic.assignments} or None,
            configs={c.name: c.value for c in topic.configs},
        )
        for index, topic in enumerate(body.topics) if topic.name not in refused
    }
    allowed = iter(await ctx.admin.create_topics(list(wanted.values()), validate_only=body.validate_only,
                                                 timeout_ms=body.timeout_ms) if wanted else ())
    outcomes = [(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None) if index not in wanted else next(allowed)
                for index in range(len(body.topics))]
    results = [
        _created(ctx, topic, wanted[index]) if code == ErrorCode.NONE else
        R.CreatableTopicResult(name=topic.name, error_code=code, error_message=message)
        for index, (topic, (code, message)) in enumerate(zip(body.topics, outcomes))
    ]
    return R(throttle_time_ms=0, topics=results)


def _created(ctx: BrokerContext, topic: Any, wanted: TopicRequest) -> Any:
    if wanted.assignment:
        partitions, replication = len(wanted.assignment), len(next(iter(wanted.assignment.values())))
    else:
        partitions = wanted.num_partitions if wanted.num_partitions > 0 else int(ctx.config.get("num.partitions"))
        replication = (wanted.replication_factor if wanted.replication_factor > 0
                       else int(ctx.config.get("default.replication.factor")))
    configs = effective_topic_config(ctx.config, validate_topic_configs(wanted.configs))
    return R.CreatableTopicResult(
        name=topic.name,
        topic_id=topic_id_of(ctx.metadata, topic.name),
        error_code=ErrorCode.NONE,
        num_partitions=partitions,
        replication_factor=replication,
        configs=[
            R.CreatableTopicConfigs(name=name, value=value.value, read_only=False, config_source=value.source,
                                    is_sensitive=False)
            for name, value in sorted(configs.items())
        ],
    )
