"""DescribeAcls (29), CreateAcls (30) and DeleteAcls (31): Kafka's access control lists on the wire.

Versions 0-3, flexible from 2, as Kafka 3.9 serves them. The pattern type
fields arrive with version 1; version 0 means LITERAL (3). The numbers of the
enumerations are Kafka's (see ``broker_core/security/authorizer/acl.py``):
resource types 1 ANY, 2 Topic, 3 Group, 4 Cluster, 5 TransactionalId,
6 DelegationToken; pattern types 1 ANY, 2 MATCH, 3 LITERAL, 4 PREFIXED;
permissions 1 ANY, 2 DENY, 3 ALLOW; operations 1 ANY, 2 ALL, 3 READ ...
12 IDEMPOTENT_WRITE.
"""

from __future__ import annotations

from spate.protocol.api_keys import ApiKey
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT8, INT16, INT32, STRING

LITERAL_PATTERN = 3
_VERSIONS = (0, 3)
_FLEXIBLE = 2


def _pattern_field(name: str) -> Field:
    return Field(name, INT8, versions=(1, None), default=LITERAL_PATTERN)


def _filter_fields() -> list[Field]:
    return [
        Field("resource_type_filter", INT8),
        Field("resource_name_filter", STRING, nullable=True, default=None),
        _pattern_field("pattern_type_filter"),
        Field("principal_filter", STRING, nullable=True, default=None),
        Field("host_filter", STRING, nullable=True, default=None),
        Field("operation", INT8),
        Field("permission_type", INT8),
    ]


DescribeAclsRequest = message(
    "DescribeAclsRequest", api_key=ApiKey.DESCRIBE_ACLS, versions=_VERSIONS, flexible_from=_FLEXIBLE,
    fields=_filter_fields(),
)

DescribeAclsResponse = message(
    "DescribeAclsResponse", api_key=ApiKey.DESCRIBE_ACLS, versions=_VERSIONS, flexible_from=_FLEXIBLE,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable=True, default=None),
        Field("resources", Array(Struct(
            "DescribeAclsResource",
            Field("resource_type", INT8),
            Field("resource_name", STRING),
            _pattern_field("pattern_type"),
            Field("acls", Array(Struct(
                "AclDescription",
                Field("principal", STRING),
                Field("host", STRING),
                Field("operation", INT8),
                Field("permission_type", INT8),
            ))),
        ))),
    ],
)

CreateAclsRequest = message(
    "CreateAclsRequest", api_key=ApiKey.CREATE_ACLS, versions=_VERSIONS, flexible_from=_FLEXIBLE,
    fields=[
        Field("creations", Array(Struct(
            "AclCreation",
            Field("resource_type", INT8),
            Field("resource_name", STRING),
            _pattern_field("resource_pattern_type"),
            Field("principal", STRING),
            Field("host", STRING),
            Field("operation", INT8),
            Field("permission_type", INT8),
        ))),
    ],
)

CreateAclsResponse = message(
    "CreateAclsResponse", api_key=ApiKey.CREATE_ACLS, versions=_VERSIONS, flexible_from=_FLEXIBLE,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("results", Array(Struct(
            "AclCreationResult",
            Field("error_code", INT16),
            Field("error_message", STRING, nullable=True, default=None),
        ))),
    ],
)

DeleteAclsRequest = message(
    "DeleteAclsRequest", api_key=ApiKey.DELETE_ACLS, versions=_VERSIONS, flexible_from=_FLEXIBLE,
    fields=[Field("filters", Array(Struct("DeleteAclsFilter", *_filter_fields())))],
)

DeleteAclsResponse = message(
    "DeleteAclsResponse", api_key=ApiKey.DELETE_ACLS, versions=_VERSIONS, flexible_from=_FLEXIBLE,
    fields=[
        Field("throttle_time_ms", INT32),
        Field("filter_results", Array(Struct(
            "DeleteAclsFilterResult",
            Field("error_code", INT16),
            Field("error_message", STRING, nullable=True, default=None),
            Field("matching_acls", Array(Struct(
                "DeleteAclsMatchingAcl",
                Field("error_code", INT16),
                Field("error_message", STRING, nullable=True, default=None),
                Field("resource_type", INT8),
                Field("resource_name", STRING),
                _pattern_field("pattern_type"),
                Field("principal", STRING),
                Field("host", STRING),
                Field("operation", INT8),
                Field("permission_type", INT8),
            ))),
        ))),
    ],
)
