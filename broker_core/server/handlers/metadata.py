"""Metadata: brokers, topics, partition leaders; auto-creates topics when allowed.

Embedded, a topic created here is described in the same answer; in a
cluster its creation is requested and the answer is LEADER_NOT_AVAILABLE
until the controller has elected its leaders (clients ask again). A
partition whose leader is not alive answers LEADER_NOT_AVAILABLE with no
leader; v0 lists only live replicas and says REPLICA_NOT_AVAILABLE when it
left some out, as Kafka does. Brokers are named by their endpoints on the
listener the request arrived on; a leader alive but without that listener
answers LISTENER_NOT_FOUND from v6 on (LEADER_NOT_AVAILABLE before), as
Kafka does.

From v10 each topic carries its id; from v12 a topic may be asked for by id
alone (its name null), and an id the broker does not know answers
UNKNOWN_TOPIC_ID with a null name. Topics asked for by id are never
auto-created.
"""

from __future__ import annotations

from typing import Any

from broker_core.cluster.errors import UnknownTopicError
from broker_core.cluster.topic_names import is_internal_topic, is_valid_topic_name
from broker_core.server.context import BrokerContext
from broker_core.server.handlers.topic_ids import topic_names_by_id
from broker_core.server.metadata_view import MetadataView, PartitionMetadata
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.metadata import MetadataResponse
from spate.protocol.types import ZERO_UUID

R = MetadataResponse
NO_LEADER_ID = -1


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    view = ctx.metadata
    brokers = [
        R.MetadataResponseBroker(node_id=b.broker_id, host=b.host, port=b.port, rack=b.rack)
        for b in view.alive_brokers()
    ]
    # v0 sends an empty list for "all topics"; v1+ sends null.
    if body.topics is None or (request.api_version == 0 and not body.topics):
        names = view.topic_names()
        allow_create = False
    else:
        by_id = [t for t in body.topics if t.name is None]
        names = [t.name for t in body.topics if t.name is not None]
        allow_create = body.allow_auto_topic_creation
    topics = [_describe_topic(ctx, name, allow_create, request.api_version) for name in names]
    if body.topics is not None and by_id:
        topics += _describe_topics_by_id(ctx, [t.topic_id for t in by_id], request.api_version)
    return R(
        throttle_time_ms=0,
        brokers=brokers,
        cluster_id=view.cluster_id(),
        controller_id=view.controller_id(),
        topics=topics,
    )


def _describe_topics_by_id(ctx: BrokerContext, topic_ids: list[Any], version: int) -> list[Any]:
    names = topic_names_by_id(ctx.metadata)
    described = []
    for topic_id in topic_ids:
        name = names.get(topic_id)
        if name is None or topic_id == ZERO_UUID:
            described.append(R.MetadataResponseTopic(error_code=ErrorCode.UNKNOWN_TOPIC_ID, name=None,
                                                     topic_id=topic_id, partitions=[]))
        else:
            described.append(_describe_topic(ctx, name, False, version))
    return described


def _describe_topic(ctx: BrokerContext, name: str, allow_create: bool, version: int) -> Any:
    if not is_valid_topic_name(name):
        return R.MetadataResponseTopic(error_code=ErrorCode.INVALID_TOPIC_EXCEPTION, name=name, partitions=[])
    try:
        topic = ctx.metadata.get_topic(name)
    except UnknownTopicError:
        created = ctx.admin.auto_create(name) if allow_create else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if isinstance(created, ErrorCode):
            return R.MetadataResponseTopic(error_code=created, name=name, partitions=[])
        topic = created
    partitions = [_describe_partition(ctx.metadata, index, state, version) for index, state in topic.partitions.items()]
    return R.MetadataResponseTopic(
        error_code=ErrorCode.NONE, name=name, topic_id=topic.topic_id, is_internal=is_internal_topic(name),
        partitions=partitions,
    )


def _describe_partition(view: MetadataView, index: int, state: PartitionMetadata, version: int) -> Any:
    replicas, isr = list(state.replicas), list(state.isr)
    error = ErrorCode.NONE
    if version == 0:
        replicas = [r for r in replicas if view.alive_broker(r) is not None]
        isr = [r for r in isr if view.alive_broker(r) is not None]
    leader_alive = state.leader >= 0 and view.alive_broker(state.leader) is not None
    if not leader_alive:
        elsewhere = version >= 6 and state.leader >= 0 and view.is_alive(state.leader)
        error = ErrorCode.LISTENER_NOT_FOUND if elsewhere else ErrorCode.LEADER_NOT_AVAILABLE
    elif len(replicas) < len(state.replicas) or len(isr) < len(state.isr):
        error = ErrorCode.REPLICA_NOT_AVAILABLE
    return R.MetadataResponsePartition(
        error_code=error,
        partition_index=index,
        leader_id=state.leader if leader_alive else NO_LEADER_ID,
        leader_epoch=state.leader_epoch,
        replica_nodes=replicas,
        isr_nodes=isr,
        offline_replicas=list(state.offline_replicas),
    )
