"""ACLs through CreateAcls, DescribeAcls and DeleteAcls, with Kafka's names for every part.

An :class:`AclBinding` names its parts as Kafka's tools do: resource type
``Topic``/``Group``/``Cluster``/``TransactionalId``/``DelegationToken``,
pattern type ``LITERAL``/``PREFIXED``, operation ``Read``, ``Write``,
``IdempotentWrite``..., permission ``Allow``/``Deny``. An
:class:`AclBindingFilter` leaves a part ``None`` to match any value, and may
use pattern type ``MATCH`` (every pattern that applies to the name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from spate.client.errors import AdminError
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import Retrier
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.acls import CreateAclsRequest, DeleteAclsRequest, DescribeAclsRequest

RESOURCE_TYPES = {"Any": 1, "Topic": 2, "Group": 3, "Cluster": 4, "TransactionalId": 5, "DelegationToken": 6}
PATTERN_TYPES = {"ANY": 1, "MATCH": 2, "LITERAL": 3, "PREFIXED": 4}
OPERATIONS = {"Any": 1, "All": 2, "Read": 3, "Write": 4, "Create": 5, "Delete": 6, "Alter": 7, "Describe": 8,
              "ClusterAction": 9, "DescribeConfigs": 10, "AlterConfigs": 11, "IdempotentWrite": 12,
              "CreateTokens": 13, "DescribeTokens": 14}
PERMISSIONS = {"Any": 1, "Deny": 2, "Allow": 3}
CLUSTER_RESOURCE_NAME = "kafka-cluster"


def _code(table: dict[str, int], kind: str, name: str | None) -> int:
    if name is None:
        return table.get("Any", table.get("ANY", 1))
    wanted = name.replace("_", "").replace("-", "").lower()
    for known, code in table.items():
        if known.lower() == wanted:
            return code
    raise ValueError(f"unknown {kind} {name!r}; one of {', '.join(table)}")


def _name(table: dict[str, int], code: int) -> str:
    return next((name for name, value in table.items() if value == code), str(code))


@dataclass(frozen=True)
class AclBinding:
    resource_type: str
    name: str
    principal: str
    operation: str
    permission: str = "Allow"
    pattern_type: str = "LITERAL"
    host: str = "*"

    def __str__(self) -> str:
        return (f"{self.permission} {self.principal} {self.operation} from {self.host} on "
                f"{self.resource_type}:{self.pattern_type}:{self.name}")


@dataclass(frozen=True)
class AclBindingFilter:
    resource_type: str | None = None
    name: str | None = None
    pattern_type: str | None = None
    principal: str | None = None
    host: str | None = None
    operation: str | None = None
    permission: str | None = None

    def fields(self) -> dict[str, object]:
        return dict(
            resource_type_filter=_code(RESOURCE_TYPES, "resource type", self.resource_type),
            resource_name_filter=self.name, pattern_type_filter=_code(PATTERN_TYPES, "pattern type",
                                                                      self.pattern_type),
            principal_filter=self.principal, host_filter=self.host,
            operation=_code(OPERATIONS, "operation", self.operation),
            permission_type=_code(PERMISSIONS, "permission", self.permission),
        )


def _binding(resource_type: int, name: str, pattern_type: int, principal: str, host: str, operation: int,
             permission: int) -> AclBinding:
    return AclBinding(_name(RESOURCE_TYPES, resource_type), name, principal, _name(OPERATIONS, operation),
                      _name(PERMISSIONS, permission), _name(PATTERN_TYPES, pattern_type), host)


class AclAdmin:
    def __init__(self, network: NetworkClient, retrier: Retrier) -> None:
        self._network = network
        self._retrier = retrier

    def create(self, bindings: Iterable[AclBinding], deadline: float) -> None:
        bindings = list(bindings)
        creations = [CreateAclsRequest.AclCreation(
            resource_type=_code(RESOURCE_TYPES, "resource type", b.resource_type), resource_name=b.name,
            resource_pattern_type=_code(PATTERN_TYPES, "pattern type", b.pattern_type), principal=b.principal,
            host=b.host, operation=_code(OPERATIONS, "operation", b.operation),
            permission_type=_code(PERMISSIONS, "permission", b.permission)) for b in bindings]

        def attempt(deadline: float) -> None:
            _, response = self._network.request(self._network.any_node(), ApiKey.CREATE_ACLS,
                                                CreateAclsRequest(creations=creations), deadline=deadline)
            errors = {str(b): KafkaError(ErrorCode.of(r.error_code), r.error_message or "")
                      for b, r in zip(bindings, response.results) if r.error_code != ErrorCode.NONE}
            if errors:
                raise AdminError("create_acls", errors)

        self._retrier.call("create_acls", attempt, deadline)

    def describe(self, acl_filter: AclBindingFilter, deadline: float) -> list[AclBinding]:
        def attempt(deadline: float) -> list[AclBinding]:
            _, response = self._network.request(self._network.any_node(), ApiKey.DESCRIBE_ACLS,
                                                DescribeAclsRequest(**acl_filter.fields()), deadline=deadline)
            if response.error_code != ErrorCode.NONE:
                raise KafkaError(ErrorCode.of(response.error_code), response.error_message or "describe_acls")
            return [_binding(r.resource_type, r.resource_name, r.pattern_type, a.principal, a.host, a.operation,
                             a.permission_type) for r in response.resources for a in r.acls]

        return self._retrier.call("describe_acls", attempt, deadline)

    def delete(self, filters: Iterable[AclBindingFilter], deadline: float) -> list[AclBinding]:
        filters = list(filters)
        request = DeleteAclsRequest(filters=[DeleteAclsRequest.DeleteAclsFilter(**f.fields()) for f in filters])

        def attempt(deadline: float) -> list[AclBinding]:
            _, response = self._network.request(self._network.any_node(), ApiKey.DELETE_ACLS, request,
                                                deadline=deadline)
            errors = {str(f): KafkaError(ErrorCode.of(r.error_code), r.error_message or "")
                      for f, r in zip(filters, response.filter_results) if r.error_code != ErrorCode.NONE}
            if errors:
                raise AdminError("delete_acls", errors)
            return [_binding(m.resource_type, m.resource_name, m.pattern_type, m.principal, m.host, m.operation,
                             m.permission_type) for r in response.filter_results for m in r.matching_acls]

        return self._retrier.call("delete_acls", attempt, deadline)
