"""The per-request authorization checks handlers make, over the broker's :class:`Authorizer`.

Without ``authorizer.class.name`` the context has no authorizer and every
check passes. Each check names Kafka's operation and resource, for the
principal and host the connection stamped on the request; the handler turns a
refusal into Kafka's error code for the resource (TOPIC_, GROUP_,
TRANSACTIONAL_ID_ or CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from broker_core.security.authorizer.acl import CLUSTER_NAME, AclOperation, ResourceType
from broker_core.security.principal import ANONYMOUS
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from broker_core.server.context import BrokerContext

Op = AclOperation
_ANONYMOUS = str(ANONYMOUS)  # a request stamped by no connection (in-process callers)


def authorized(context: BrokerContext, request: Request, operation: AclOperation, resource_type: ResourceType,
               name: str) -> bool:
    authorizer = getattr(context, "authorizer", None)  # test contexts may carry only what a handler reads
    if authorizer is None:
        return True
    return authorizer.authorize(request.principal or _ANONYMOUS, request.client_host, operation, resource_type, name)


def topic(context: BrokerContext, request: Request, operation: AclOperation, name: str) -> bool:
    return authorized(context, request, operation, ResourceType.TOPIC, name)


def group(context: BrokerContext, request: Request, operation: AclOperation, name: str) -> bool:
    return authorized(context, request, operation, ResourceType.GROUP, name)


def transactional_id(context: BrokerContext, request: Request, operation: AclOperation, name: str) -> bool:
    return authorized(context, request, operation, ResourceType.TRANSACTIONAL_ID, name)


def cluster(context: BrokerContext, request: Request, operation: AclOperation) -> bool:
    return authorized(context, request, operation, ResourceType.CLUSTER, CLUSTER_NAME)


def any_topic(context: BrokerContext, request: Request, operation: AclOperation) -> bool:
    """Kafka's ``authorizeByResourceType``: may the principal do ``operation`` on some topic?"""
    authorizer = getattr(context, "authorizer", None)
    if authorizer is None:
        return True
    return authorizer.authorize_any(request.principal or _ANONYMOUS, request.client_host, operation,
                                    ResourceType.TOPIC)


# Kafka's AclEntry.supportedOperations: what authorized-operations fields report per resource type.
SUPPORTED_OPERATIONS = {
    ResourceType.TOPIC: (Op.READ, Op.WRITE, Op.CREATE, Op.DESCRIBE, Op.DELETE, Op.ALTER, Op.DESCRIBE_CONFIGS,
                         Op.ALTER_CONFIGS),
    ResourceType.GROUP: (Op.READ, Op.DESCRIBE, Op.DELETE),
    ResourceType.CLUSTER: (Op.CREATE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS, Op.IDEMPOTENT_WRITE,
                           Op.ALTER, Op.DESCRIBE),
}


def authorized_operations(context: BrokerContext, request: Request, resource_type: ResourceType,
                          name: str = CLUSTER_NAME) -> int:
    """Kafka's ``authorizedOperations``: a bit (1 << operation code) per supported operation the principal may do
    on the resource; every supported one without an authorizer."""
    bits = 0
    for operation in SUPPORTED_OPERATIONS[resource_type]:
        if authorized(context, request, operation, resource_type, name):
            bits |= 1 << operation
    return bits


def enabled(context: BrokerContext) -> bool:
    return getattr(context, "authorizer", None) is not None


def refused_topics(context: BrokerContext, request: Request, operation: AclOperation,
                   names: Iterable[str]) -> frozenset[str]:
    """The topics among ``names`` the principal may not ``operation`` (none without an authorizer)."""
    if not enabled(context):
        return _NONE
    return frozenset(name for name in names if not topic(context, request, operation, name))


def refused_creations(context: BrokerContext, request: Request, names: Iterable[str]) -> frozenset[str]:
    """Creating a topic needs Create on the cluster or on the topic."""
    if not enabled(context) or cluster(context, request, AclOperation.CREATE):
        return _NONE
    return refused_topics(context, request, AclOperation.CREATE, names)


_NONE: frozenset[str] = frozenset()


# DescribeConfigs / AlterConfigs resource types: a topic's configs, or a broker's (the cluster resource).
_CONFIG_TOPIC, _CONFIG_BROKERS = 2, (4, 8)


def config_refusal(context: BrokerContext, request: Request, operation: AclOperation, resource_type: int,
                   name: str) -> tuple[ErrorCode, str] | None:
    """DescribeConfigs or AlterConfigs on the topic, or on the cluster for a broker's configs."""
    if not enabled(context):
        return None
    if resource_type == _CONFIG_TOPIC:
        if topic(context, request, operation, name):
            return None
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED, f"not authorized to {operation.kafka_name} topic {name}"
    if resource_type in _CONFIG_BROKERS and not cluster(context, request, operation):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED, f"not authorized to {operation.kafka_name} the cluster"
    return None


def cluster_refusal(context: BrokerContext, request: Request, operation: AclOperation) -> ErrorCode | None:
    """CLUSTER_AUTHORIZATION_FAILED unless the principal may ``operation`` the cluster."""
    return None if cluster(context, request, operation) else ErrorCode.CLUSTER_AUTHORIZATION_FAILED
