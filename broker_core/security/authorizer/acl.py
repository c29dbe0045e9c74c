"""Kafka's ACL model: who (principal, host) may do what (operation) to which resources (a pattern).

An ACL binding is a resource pattern (type, name, LITERAL or PREFIXED) and an
access control entry (principal such as ``User:alice`` or ``User:*``, host or
``*``, operation, Allow or Deny). Filters (DescribeAcls, DeleteAcls) may say
ANY for each part, and pattern type MATCH: every pattern that would apply to a
resource of that exact name (the literal name, the literal ``*`` and every
prefix of it). The numbers are Kafka's wire codes.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"


class ResourceType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7

    @property
    def kafka_name(self) -> str:
        """The name Kafka uses in ZooKeeper paths and tools (``Topic``, ``TransactionalId``)."""
        return "".join(part.capitalize() for part in self.name.split("_"))


class PatternType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14

    @property
    def kafka_name(self) -> str:
        """``Read``, ``ClusterAction``, ``IdempotentWrite``: the names of Kafka's tools and znodes."""
        return "".join(part.capitalize() for part in self.name.split("_"))


class AclPermissionType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3

    @property
    def kafka_name(self) -> str:
        return self.name.capitalize()


# Kafka: an Allow for any of these grants Describe (DescribeConfigs for AlterConfigs) as well.
IMPLIED_BY: dict[AclOperation, frozenset[AclOperation]] = {
    AclOperation.DESCRIBE: frozenset({AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE,
                                      AclOperation.DELETE, AclOperation.ALTER}),
    AclOperation.DESCRIBE_CONFIGS: frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS}),
}

CONCRETE_RESOURCE_TYPES = (ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER,
                           ResourceType.TRANSACTIONAL_ID, ResourceType.DELEGATION_TOKEN)


class InvalidAclError(ValueError):
    """An ACL or filter that cannot be stored or applied (Kafka: INVALID_REQUEST)."""


def parse_enum(kind: type[enum.IntEnum], text: str) -> enum.IntEnum:
    """``Read``, ``READ``, ``read``, ``ClusterAction``, ``cluster_action``, ``TransactionalId`` all parse."""
    wanted = text.replace("_", "").replace("-", "").lower()
    for member in kind:
        if member.name.replace("_", "").lower() == wanted:
            return member
    raise InvalidAclError(f"unknown {kind.__name__} {text!r}")


@dataclass(frozen=True)
class ResourcePattern:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType = PatternType.LITERAL

    def __post_init__(self) -> None:
        if self.resource_type not in CONCRETE_RESOURCE_TYPES:
            raise InvalidAclError(f"resource type {self.resource_type.name} cannot hold ACLs")
        if self.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
            raise InvalidAclError(f"pattern type {self.pattern_type.name} cannot hold ACLs (LITERAL or PREFIXED)")
        if not self.name:
            raise InvalidAclError("the resource name must not be empty")
        if self.resource_type == ResourceType.CLUSTER and self.name != CLUSTER_NAME:
            raise InvalidAclError(f"the cluster resource is named {CLUSTER_NAME!r}")
        if self.pattern_type == PatternType.PREFIXED and self.name == WILDCARD:
            raise InvalidAclError("a PREFIXED pattern cannot be '*' (use LITERAL '*' for every resource)")

    def __str__(self) -> str:
        return f"{self.resource_type.kafka_name}:{self.pattern_type.name}:{self.name}"


@dataclass(frozen=True)
class AccessControlEntry:
    principal: str
    host: str
    operation: AclOperation
    permission: AclPermissionType

    def __post_init__(self) -> None:
        if ":" not in self.principal:
            raise InvalidAclError(f"principal {self.principal!r} is not of the form Type:name (User:alice)")
        if self.operation in (AclOperation.ANY, AclOperation.UNKNOWN):
            raise InvalidAclError(f"operation {self.operation.name} cannot be granted or denied")
        if self.permission not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
            raise InvalidAclError(f"permission {self.permission.name} must be ALLOW or DENY")
        if not self.host:
            raise InvalidAclError("the host must not be empty (use '*' for every host)")


@dataclass(frozen=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry

    def __str__(self) -> str:
        e = self.entry
        return (f"{e.permission.kafka_name} {e.principal} {e.operation.kafka_name} from host {e.host} "
                f"on {self.pattern}")


@dataclass(frozen=True)
class AclBindingFilter:
    """ANY / None matches every value of a part; pattern type MATCH matches the patterns that apply to the
    resource named."""

    resource_type: ResourceType = ResourceType.ANY
    name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission: AclPermissionType = AclPermissionType.ANY

    def validate(self) -> None:
        for part, value in (("resource type", self.resource_type), ("pattern type", self.pattern_type),
                            ("operation", self.operation), ("permission", self.permission)):
            if value == 0:
                raise InvalidAclError(f"the filter's {part} is UNKNOWN")

    def matches(self, binding: AclBinding) -> bool:
        return self.matches_pattern(binding.pattern) and self.matches_entry(binding.entry)

    def matches_pattern(self, pattern: ResourcePattern) -> bool:
        if self.resource_type != ResourceType.ANY and self.resource_type != pattern.resource_type:
            return False
        if self.pattern_type == PatternType.MATCH:
            if self.name is None:
                return True
            if pattern.pattern_type == PatternType.LITERAL:
                return pattern.name in (self.name, WILDCARD)
            return self.name.startswith(pattern.name)
        if self.pattern_type != PatternType.ANY and self.pattern_type != pattern.pattern_type:
            return False
        return self.name is None or self.name == pattern.name

    def matches_entry(self, entry: AccessControlEntry) -> bool:
        return ((self.principal is None or self.principal == entry.principal)
                and (self.host is None or self.host == entry.host)
                and (self.operation == AclOperation.ANY or self.operation == entry.operation)
                and (self.permission == AclPermissionType.ANY or self.permission == entry.permission))
