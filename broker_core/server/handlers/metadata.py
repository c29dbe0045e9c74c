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

With an authorizer, "all topics" lists only those the principal may
Describe; a topic named without Describe is answered
TOPIC_AUTHORIZATION_FAILED, and auto-creating one needs Create on the
cluster or the topic (else TOPIC_AUTHORIZATION_FAILED).

A described topic's entry is encoded once and reused from the broker's
:class:`~broker_core.server.metadata_answer_cache.MetadataAnswerCache` for
as long as the topic, the brokers and the request's version, listener and
authorized operations are the same (see that module for what invalidates it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from broker_core.cluster.errors import UnknownTopicError
from broker_core.cluster.metadata_store import BrokerRegistration
from broker_core.cluster.topic_names import is_internal_topic, is_valid_topic_name
from broker_core.security.authorizer.acl import ResourceType
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from broker_core.server.handlers.topic_ids import topic_names_by_id
from broker_core.server.metadata_answer_cache import TopicEntryKey
from broker_core.server.metadata_view import MetadataView, PartitionMetadata, TopicMetadata
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.metadata import AUTHORIZED_OPERATIONS_OMITTED, MetadataResponse
from spate.protocol.pre_encoded import PreEncoded
from spate.protocol.types import ZERO_UUID

R = MetadataResponse
NO_LEADER_ID = -1


@dataclass
class _Brokers:
    """The live brokers as this request sees them, looked up once per request, not once per partition."""

    view: MetadataView
    reachable: dict[int, BrokerRegistration]  # alive, at their endpoint on the request's listener
    reachable_ids: frozenset[int]
    # Every answer is_alive gave, which the answer cache checks again before reusing an entry built with them.
    alive_answers: dict[int, bool] = field(default_factory=dict)

    @classmethod
    def of(cls, view: MetadataView) -> _Brokers:
        reachable = {b.broker_id: b for b in view.alive_brokers()}
        return cls(view, reachable, frozenset(reachable))

    def is_alive(self, broker_id: int) -> bool:
        """Alive on any listener."""
        alive = self.alive_answers.get(broker_id)
        if alive is None:
            alive = self.alive_answers[broker_id] = self.view.is_alive(broker_id)
        return alive


def handle(ctx: BrokerContext, request: Request) -> Any:
    body = request.body
    view = ctx.metadata
    live = _Brokers.of(view)
    brokers = [
        R.MetadataResponseBroker(node_id=b.broker_id, host=b.host, port=b.port, rack=b.rack)
        for b in live.reachable.values()
    ]
    # v0 sends an empty list for "all topics"; v1+ sends null.
    if body.topics is None or (request.api_version == 0 and not body.topics):
        names = view.topic_names()
        if acl_checks.enabled(ctx):
            names = [name for name in names if acl_checks.topic(ctx, request, acl_checks.Op.DESCRIBE, name)]
        by_id, allow_create = [], False
    else:
        by_id = [t for t in body.topics if t.name is None]
        names = [t.name for t in body.topics if t.name is not None]
        allow_create = body.allow_auto_topic_creation
    topics = [_describe_topic(ctx, request, live, name, allow_create) for name in names]
    if by_id:
        topics += _describe_topics_by_id(ctx, request, live, [t.topic_id for t in by_id])
    cluster_operations = AUTHORIZED_OPERATIONS_OMITTED
    if getattr(body, "include_cluster_authorized_operations", False):
        cluster_operations = acl_checks.authorized_operations(ctx, request, ResourceType.CLUSTER)
    return R(
        throttle_time_ms=0,
        brokers=brokers,
        cluster_id=view.cluster_id(),
        controller_id=view.controller_id(),
        topics=topics,
        cluster_authorized_operations=cluster_operations,
    )


def _describe_topics_by_id(ctx: BrokerContext, request: Request, live: _Brokers, topic_ids: list[Any]) -> list[Any]:
    names = topic_names_by_id(ctx.metadata)
    described = []
    for topic_id in topic_ids:
        name = names.get(topic_id)
        if name is None or topic_id == ZERO_UUID:
            described.append(R.MetadataResponseTopic(error_code=ErrorCode.UNKNOWN_TOPIC_ID, name=None,
                                                     topic_id=topic_id, partitions=[]))
        else:
            described.append(_describe_topic(ctx, request, live, name, False))
    return described


def _describe_topic(ctx: BrokerContext, request: Request, live: _Brokers, name: str, allow_create: bool) -> Any:
    if not acl_checks.topic(ctx, request, acl_checks.Op.DESCRIBE, name):
        return R.MetadataResponseTopic(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=name, partitions=[])
    if not is_valid_topic_name(name):
        return R.MetadataResponseTopic(error_code=ErrorCode.INVALID_TOPIC_EXCEPTION, name=name, partitions=[])
    try:
        topic = ctx.metadata.get_topic(name)
    except UnknownTopicError:
        if allow_create and not _may_create(ctx, request, name):
            return R.MetadataResponseTopic(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=name, partitions=[])
        created = ctx.admin.auto_create(name) if allow_create else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if isinstance(created, ErrorCode):
            return R.MetadataResponseTopic(error_code=created, name=name, partitions=[])
        topic = created
    return _topic_entry(ctx, request, live, topic)


def _topic_entry(ctx: BrokerContext, request: Request, live: _Brokers, topic: TopicMetadata) -> PreEncoded:
    """The topic's entry encoded, from the answer cache when ``topic`` and the brokers are as they were."""
    version = request.api_version
    operations = AUTHORIZED_OPERATIONS_OMITTED
    if getattr(request.body, "include_topic_authorized_operations", False):
        operations = acl_checks.authorized_operations(ctx, request, ResourceType.TOPIC, topic.name)
    key = TopicEntryKey(topic.name, version, ctx.listener_name, operations)
    cached = ctx.metadata_answers.get(key, topic, live.reachable_ids, live.is_alive)
    if cached is not None:
        return cached
    described = R.MetadataResponseTopic(
        error_code=ErrorCode.NONE, name=topic.name, topic_id=topic.topic_id, is_internal=is_internal_topic(topic.name),
        partitions=[_describe_partition(live, index, state, version) for index, state in topic.partitions.items()],
        topic_authorized_operations=operations,
    )
    encoded = R.SCHEMA.encode_struct(described, version)
    return ctx.metadata_answers.put(key, topic, live.reachable_ids, live.alive_answers, encoded)


def _may_create(ctx: BrokerContext, request: Request, name: str) -> bool:
    create = acl_checks.Op.CREATE
    return acl_checks.cluster(ctx, request, create) or acl_checks.topic(ctx, request, create, name)


def _describe_partition(live: _Brokers, index: int, state: PartitionMetadata, version: int) -> Any:
    replicas, isr = list(state.replicas), list(state.isr)
    error = ErrorCode.NONE
    reachable = live.reachable
    if version == 0:
        replicas = [r for r in replicas if r in reachable]
        isr = [r for r in isr if r in reachable]
    leader_alive = state.leader in reachable
    if not leader_alive:
        elsewhere = version >= 6 and state.leader >= 0 and live.is_alive(state.leader)
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
