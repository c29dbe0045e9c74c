"""Authorized operations as Metadata, DescribeCluster and DescribeGroups report them (Kafka's bit fields)."""

from __future__ import annotations

from dataclasses import dataclass

from broker_core.security.authorizer.acl import AclOperation as Op
from broker_core.security.authorizer.acl import ResourceType
from broker_core.server.request_authorization import authorized_operations


@dataclass
class AllowOnly:
    allowed: set[tuple[Op, ResourceType, str]]

    def authorize(self, principal: str, host: str, operation: Op, resource_type: ResourceType, name: str) -> bool:
        return (operation, resource_type, name) in self.allowed


@dataclass
class Context:
    authorizer: AllowOnly | None = None


@dataclass
class Request:
    principal: str = "User:alice"
    client_host: str = "127.0.0.1"


def bits(*operations: Op) -> int:
    return sum(1 << op for op in operations)


def test_without_an_authorizer_every_supported_operation_is_authorized() -> None:
    assert authorized_operations(Context(), Request(), ResourceType.TOPIC, "t") == bits(
        Op.READ, Op.WRITE, Op.CREATE, Op.DELETE, Op.ALTER, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS)
    assert authorized_operations(Context(), Request(), ResourceType.GROUP, "g") == bits(Op.READ, Op.DESCRIBE,
                                                                                         Op.DELETE)


def test_with_an_authorizer_only_what_the_acls_allow() -> None:
    context = Context(AllowOnly({(Op.READ, ResourceType.TOPIC, "t"), (Op.DESCRIBE, ResourceType.TOPIC, "t"),
                                 (Op.READ, ResourceType.TOPIC, "other")}))
    assert authorized_operations(context, Request(), ResourceType.TOPIC, "t") == bits(Op.READ, Op.DESCRIBE)


def test_cluster_operations() -> None:
    context = Context(AllowOnly({(Op.IDEMPOTENT_WRITE, ResourceType.CLUSTER, "kafka-cluster")}))
    assert authorized_operations(context, Request(), ResourceType.CLUSTER) == bits(Op.IDEMPOTENT_WRITE)
