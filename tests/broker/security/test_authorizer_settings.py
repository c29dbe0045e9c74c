"""authorizer.class.name and friends, and the ACL APIs' answers without an authorizer or permission."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.errors import ConfigError
from broker_core.security.authorizer.acl_store import FileAclStore
from broker_core.security.authorizer.authorizer import Authorizer, authorizer_enabled
from broker_core.server.handlers import acls
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.acls import CreateAclsRequest, DescribeAclsRequest


@pytest.mark.parametrize("name", ["kafka.security.authorizer.AclAuthorizer",
                                  "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                                  "spate.security.AclAuthorizer"])
def test_kafkas_authorizer_names_select_the_acl_authorizer(name: str) -> None:
    config = BrokerConfig.from_properties({"authorizer.class.name": name})
    assert authorizer_enabled(config.get_str("authorizer.class.name"))


def test_no_authorizer_by_default_and_acls_closed_when_enabled() -> None:
    config = BrokerConfig.from_properties({})
    assert not authorizer_enabled(config.get_str("authorizer.class.name"))
    assert config.get_bool("allow.everyone.if.no.acl.found") is False


def test_an_unknown_authorizer_class_fails_naming_the_property() -> None:
    with pytest.raises(ConfigError, match="authorizer.class.name"):
        BrokerConfig.from_properties({"authorizer.class.name": "com.example.MyAuthorizer"})


def request(api_key: ApiKey, body: object, principal: str = "User:alice") -> Request:
    return Request(header=None, body=body, api_key=api_key, api_version=1, size=0, client_host="10.0.0.1",
                   principal=principal)


CREATION = CreateAclsRequest.AclCreation(resource_type=2, resource_name="t", resource_pattern_type=3,
                                         principal="User:bob", host="*", operation=3, permission_type=3)
DESCRIBE_ALL = DescribeAclsRequest(resource_type_filter=1, resource_name_filter=None, pattern_type_filter=1,
                                   principal_filter=None, host_filter=None, operation=1, permission_type=1)


def test_acl_apis_answer_security_disabled_without_an_authorizer() -> None:
    ctx = SimpleNamespace(authorizer=None)
    created = acls.handle_create(ctx, request(ApiKey.CREATE_ACLS, CreateAclsRequest(creations=[CREATION])))
    assert created.results[0].error_code == ErrorCode.SECURITY_DISABLED
    described = acls.handle_describe(ctx, request(ApiKey.DESCRIBE_ACLS, DESCRIBE_ALL))
    assert described.error_code == ErrorCode.SECURITY_DISABLED


def test_acl_apis_need_the_cluster_permissions(tmp_path: Path) -> None:
    authorizer = Authorizer(FileAclStore(tmp_path), super_users={"User:admin"})
    authorizer.start()
    ctx = SimpleNamespace(authorizer=authorizer)
    created = acls.handle_create(ctx, request(ApiKey.CREATE_ACLS, CreateAclsRequest(creations=[CREATION])))
    assert created.results[0].error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    described = acls.handle_describe(ctx, request(ApiKey.DESCRIBE_ACLS, DESCRIBE_ALL))
    assert described.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def test_an_invalid_creation_is_refused_alone(tmp_path: Path) -> None:
    authorizer = Authorizer(FileAclStore(tmp_path))
    authorizer.start()
    bad = CreateAclsRequest.AclCreation(resource_type=2, resource_name="t", resource_pattern_type=2,
                                        principal="User:bob", host="*", operation=3, permission_type=3)
    response = acls.create(authorizer, [bad, CREATION])
    assert [r.error_code for r in response.results] == [ErrorCode.INVALID_REQUEST, ErrorCode.NONE]
    assert len(list(authorizer.snapshot.bindings())) == 1
