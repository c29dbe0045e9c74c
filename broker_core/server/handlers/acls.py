"""DescribeAcls, CreateAcls and DeleteAcls: managing the authorizer's ACLs.

Without an authorizer (``authorizer.class.name`` empty) each answers
SECURITY_DISABLED, as Kafka does. Describing needs Describe on the cluster,
creating and deleting Alter on the cluster (else CLUSTER_AUTHORIZATION_FAILED).
A creation that is not a valid ACL (a pattern type other than LITERAL or
PREFIXED, the ANY resource type, a principal without a type...) gets
INVALID_REQUEST with the reason; the others of the request are still made.
Creating and deleting write to the store (ZooKeeper, the disk): they run on a
worker thread.
"""

from __future__ import annotations

import asyncio
from typing import Any

from broker_core.security.authorizer.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    InvalidAclError,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from broker_core.security.authorizer.authorizer import Authorizer
from broker_core.server import request_authorization as acl_checks
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.acls import CreateAclsResponse, DeleteAclsResponse, DescribeAclsResponse

_DISABLED = "No Authorizer is configured on the broker"


def _enum(kind: type, value: int) -> Any:
    try:
        return kind(value)
    except ValueError:
        return kind(0)


def binding_filter(entry: Any) -> AclBindingFilter:
    return AclBindingFilter(
        resource_type=_enum(ResourceType, entry.resource_type_filter), name=entry.resource_name_filter,
        pattern_type=_enum(PatternType, entry.pattern_type_filter), principal=entry.principal_filter,
        host=entry.host_filter, operation=_enum(AclOperation, entry.operation),
        permission=_enum(AclPermissionType, entry.permission_type),
    )


def handle_describe(ctx: BrokerContext, request: Request) -> Any:
    R = DescribeAclsResponse
    if ctx.authorizer is None:
        return R(throttle_time_ms=0, error_code=int(ErrorCode.SECURITY_DISABLED), error_message=_DISABLED,
                 resources=[])
    if not acl_checks.cluster(ctx, request, AclOperation.DESCRIBE):
        return R(throttle_time_ms=0, error_code=int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED), resources=[])
    acl_filter = binding_filter(request.body)
    try:
        acl_filter.validate()
    except InvalidAclError as exc:
        return R(throttle_time_ms=0, error_code=int(ErrorCode.INVALID_REQUEST), error_message=str(exc), resources=[])
    grouped: dict[ResourcePattern, list[AccessControlEntry]] = {}
    for binding in ctx.authorizer.describe(acl_filter):
        grouped.setdefault(binding.pattern, []).append(binding.entry)
    resources = [
        R.DescribeAclsResource(
            resource_type=int(pattern.resource_type), resource_name=pattern.name,
            pattern_type=int(pattern.pattern_type),
            acls=[R.AclDescription(principal=e.principal, host=e.host, operation=int(e.operation),
                                   permission_type=int(e.permission)) for e in entries],
        )
        for pattern, entries in grouped.items()
    ]
    return R(throttle_time_ms=0, error_code=0, resources=resources)


def handle_create(ctx: BrokerContext, request: Request) -> Any:
    R = CreateAclsResponse
    creations = request.body.creations
    code = _admin_refusal(ctx, request)
    if code is not None:
        message = _DISABLED if code == ErrorCode.SECURITY_DISABLED else None
        return R(throttle_time_ms=0, results=[R.AclCreationResult(error_code=int(code), error_message=message)
                                              for _ in creations])
    return asyncio.to_thread(create, ctx.authorizer, creations)


def create(authorizer: Authorizer, creations: Any) -> Any:
    R = CreateAclsResponse
    results: list[Any] = []
    valid: list[AclBinding] = []
    for creation in creations:
        try:
            binding = AclBinding(
                ResourcePattern(_enum(ResourceType, creation.resource_type), creation.resource_name,
                                _enum(PatternType, creation.resource_pattern_type)),
                AccessControlEntry(creation.principal, creation.host, _enum(AclOperation, creation.operation),
                                   _enum(AclPermissionType, creation.permission_type)),
            )
        except InvalidAclError as exc:
            results.append(R.AclCreationResult(error_code=int(ErrorCode.INVALID_REQUEST), error_message=str(exc)))
            continue
        valid.append(binding)
        results.append(R.AclCreationResult(error_code=0, error_message=None))
    if valid:
        authorizer.create(valid)
    return R(throttle_time_ms=0, results=results)


def handle_delete(ctx: BrokerContext, request: Request) -> Any:
    R = DeleteAclsResponse
    filters = request.body.filters
    code = _admin_refusal(ctx, request)
    if code is not None:
        message = _DISABLED if code == ErrorCode.SECURITY_DISABLED else None
        return R(throttle_time_ms=0, filter_results=[
            R.DeleteAclsFilterResult(error_code=int(code), error_message=message, matching_acls=[])
            for _ in filters])
    return asyncio.to_thread(delete, ctx.authorizer, filters)


def delete(authorizer: Authorizer, entries: Any) -> Any:
    R = DeleteAclsResponse
    filters = [binding_filter(entry) for entry in entries]
    invalid: dict[int, str] = {}
    for index, acl_filter in enumerate(filters):
        try:
            acl_filter.validate()
        except InvalidAclError as exc:
            invalid[index] = str(exc)
    matched = authorizer.delete([f for i, f in enumerate(filters) if i not in invalid])
    results: list[Any] = []
    for index in range(len(filters)):
        if index in invalid:
            results.append(R.DeleteAclsFilterResult(error_code=int(ErrorCode.INVALID_REQUEST),
                                                    error_message=invalid[index], matching_acls=[]))
            continue
        results.append(R.DeleteAclsFilterResult(error_code=0, error_message=None, matching_acls=[
            R.DeleteAclsMatchingAcl(
                error_code=0, error_message=None, resource_type=int(b.pattern.resource_type),
                resource_name=b.pattern.name, pattern_type=int(b.pattern.pattern_type), principal=b.entry.principal,
                host=b.entry.host, operation=int(b.entry.operation), permission_type=int(b.entry.permission))
            for b in matched.pop(0)]))
    return R(throttle_time_ms=0, filter_results=results)


def _admin_refusal(ctx: BrokerContext, request: Request) -> ErrorCode | None:
    if ctx.authorizer is None:
        return ErrorCode.SECURITY_DISABLED
    if not acl_checks.cluster(ctx, request, AclOperation.ALTER):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    return None
