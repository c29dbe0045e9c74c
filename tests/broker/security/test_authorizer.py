"""Kafka's authorization rules: matching patterns, principals and hosts, Deny wins, implied operations,
super users, allow.everyone.if.no.acl.found, and the decision cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.security.authorizer.acl import (
    CLUSTER_NAME,
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
from broker_core.security.authorizer.acl_store import FileAclStore
from broker_core.security.authorizer.authorizer import Authorizer, parse_super_users

Op, Perm, RT = AclOperation, AclPermissionType, ResourceType
ALICE, BOB = "User:alice", "User:bob"
HOST = "10.0.0.7"


def binding(principal: str, operation: AclOperation, name: str = "orders", *, kind: ResourceType = RT.TOPIC,
            pattern: PatternType = PatternType.LITERAL, permission: AclPermissionType = Perm.ALLOW,
            host: str = "*") -> AclBinding:
    return AclBinding(ResourcePattern(kind, name, pattern), AccessControlEntry(principal, host, operation, permission))


@pytest.fixture
def authorizer(tmp_path: Path) -> Authorizer:
    auth = Authorizer(FileAclStore(tmp_path), super_users={"User:admin"})
    auth.start()
    return auth


def allowed(auth: Authorizer, principal: str, operation: AclOperation, name: str = "orders",
            kind: ResourceType = RT.TOPIC, host: str = HOST) -> bool:
    return auth.authorize(principal, host, operation, kind, name)


def test_nothing_is_allowed_without_acls_by_default(authorizer: Authorizer) -> None:
    assert not allowed(authorizer, ALICE, Op.READ)


def test_allow_everyone_if_no_acl_found_opens_resources_without_acls(tmp_path: Path) -> None:
    auth = Authorizer(FileAclStore(tmp_path), allow_if_no_acl=True)
    auth.start()
    assert allowed(auth, ALICE, Op.WRITE)
    auth.create([binding(BOB, Op.READ)])
    assert not allowed(auth, ALICE, Op.WRITE), "a resource with any ACL follows its ACLs"
    assert allowed(auth, ALICE, Op.WRITE, "other")


def test_literal_acl_allows_its_principal_and_operation_only(authorizer: Authorizer) -> None:
    authorizer.create([binding(ALICE, Op.READ)])
    assert allowed(authorizer, ALICE, Op.READ)
    assert not allowed(authorizer, ALICE, Op.WRITE)
    assert not allowed(authorizer, BOB, Op.READ)
    assert not allowed(authorizer, ALICE, Op.READ, "orders2")


def test_wildcard_resource_principal_and_host(authorizer: Authorizer) -> None:
    authorizer.create([binding("User:*", Op.WRITE, "*")])
    assert allowed(authorizer, BOB, Op.WRITE, "anything")


def test_host_must_match_unless_wildcard(authorizer: Authorizer) -> None:
    authorizer.create([binding(ALICE, Op.READ, host="10.0.0.1")])
    assert allowed(authorizer, ALICE, Op.READ, host="10.0.0.1")
    assert not allowed(authorizer, ALICE, Op.READ, host=HOST)


def test_prefixed_acl_covers_names_starting_with_the_prefix(authorizer: Authorizer) -> None:
    authorizer.create([binding(ALICE, Op.READ, "sales-", pattern=PatternType.PREFIXED)])
    assert allowed(authorizer, ALICE, Op.READ, "sales-eu")
    assert allowed(authorizer, ALICE, Op.READ, "sales-")
    assert not allowed(authorizer, ALICE, Op.READ, "sale")
    assert not allowed(authorizer, ALICE, Op.READ, "marketing")


def test_deny_wins_over_allow(authorizer: Authorizer) -> None:
    authorizer.create([binding(ALICE, Op.ALL), binding(ALICE, Op.WRITE, permission=Perm.DENY)])
    assert allowed(authorizer, ALICE, Op.READ)
    assert not allowed(authorizer, ALICE, Op.WRITE)


def test_prefixed_deny_overrides_a_literal_allow(authorizer: Authorizer) -> None:
    authorizer.create([binding(ALICE, Op.READ, "secret-x"),
                       binding("User:*", Op.ALL, "secret-", pattern=PatternType.PREFIXED, permission=Perm.DENY)])
    assert not allowed(authorizer, ALICE, Op.READ, "secret-x")


@pytest.mark.parametrize("granted", [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER, Op.DESCRIBE])
def test_read_write_delete_alter_imply_describe(authorizer: Authorizer, granted: AclOperation) -> None:
    authorizer.create([binding(ALICE, granted)])
    assert allowed(authorizer, ALICE, Op.DESCRIBE)


def test_alter_configs_implies_describe_configs_but_not_the_reverse(authorizer: Authorizer) -> None:
    authorizer.create([binding(ALICE, Op.ALTER_CONFIGS), binding(BOB, Op.DESCRIBE_CONFIGS)])
    assert allowed(authorizer, ALICE, Op.DESCRIBE_CONFIGS)
    assert not allowed(authorizer, BOB, Op.ALTER_CONFIGS)


def test_describe_does_not_imply_read(authorizer: Authorizer) -> None:
    authorizer.create([binding(ALICE, Op.DESCRIBE)])
    assert not allowed(authorizer, ALICE, Op.READ)


def test_super_users_are_allowed_everything_even_when_denied(authorizer: Authorizer) -> None:
    authorizer.create([binding("User:admin", Op.ALL, permission=Perm.DENY)])
    assert allowed(authorizer, "User:admin", Op.DELETE)
    assert allowed(authorizer, "User:admin", Op.CLUSTER_ACTION, CLUSTER_NAME, RT.CLUSTER)


def test_super_users_parse_kafka_syntax() -> None:
    assert parse_super_users("User:a; User:b;") == frozenset({"User:a", "User:b"})


def test_resource_types_are_separate(authorizer: Authorizer) -> None:
    authorizer.create([binding(ALICE, Op.READ, "orders", kind=RT.GROUP)])
    assert allowed(authorizer, ALICE, Op.READ, "orders", RT.GROUP)
    assert not allowed(authorizer, ALICE, Op.READ, "orders", RT.TOPIC)


def test_a_change_drops_cached_decisions(authorizer: Authorizer) -> None:
    assert not allowed(authorizer, ALICE, Op.READ)
    authorizer.create([binding(ALICE, Op.READ)])
    assert allowed(authorizer, ALICE, Op.READ)
    authorizer.delete([AclBindingFilter(principal=ALICE)])
    assert not allowed(authorizer, ALICE, Op.READ)


def test_write_on_any_topic_counts_for_idempotent_producers(authorizer: Authorizer) -> None:
    assert not authorizer.authorize_any(ALICE, HOST, Op.WRITE, RT.TOPIC)
    authorizer.create([binding(ALICE, Op.WRITE, "logs-", pattern=PatternType.PREFIXED)])
    assert authorizer.authorize_any(ALICE, HOST, Op.WRITE, RT.TOPIC)
    authorizer.create([binding(ALICE, Op.WRITE, "*", permission=Perm.DENY)])
    assert not authorizer.authorize_any(ALICE, HOST, Op.WRITE, RT.TOPIC)


def test_filters_any_match_and_exact_pattern_types(authorizer: Authorizer) -> None:
    literal = binding(ALICE, Op.READ, "sales-eu")
    prefixed = binding(BOB, Op.READ, "sales-", pattern=PatternType.PREFIXED)
    wildcard = binding(BOB, Op.WRITE, "*")
    other = binding(BOB, Op.READ, "hr")
    authorizer.create([literal, prefixed, wildcard, other])
    match = AclBindingFilter(resource_type=RT.TOPIC, name="sales-eu", pattern_type=PatternType.MATCH)
    assert set(authorizer.describe(match)) == {literal, prefixed, wildcard}
    assert authorizer.describe(AclBindingFilter(pattern_type=PatternType.PREFIXED)) == [prefixed]
    assert set(authorizer.describe(AclBindingFilter(principal=BOB))) == {prefixed, wildcard, other}
    assert authorizer.describe(AclBindingFilter(resource_type=RT.TOPIC, name="sales-eu",
                                                pattern_type=PatternType.LITERAL)) == [literal]


def test_delete_reports_what_each_filter_removed(authorizer: Authorizer) -> None:
    a, b = binding(ALICE, Op.READ), binding(BOB, Op.WRITE)
    authorizer.create([a, b])
    removed = authorizer.delete([AclBindingFilter(principal=ALICE), AclBindingFilter(principal="User:nobody")])
    assert removed == [[a], []]
    assert list(authorizer.snapshot.bindings()) == [b]


def test_acls_survive_a_restart_in_the_file_store(tmp_path: Path) -> None:
    first = Authorizer(FileAclStore(tmp_path))
    first.start()
    first.create([binding(ALICE, Op.READ, "sales-", pattern=PatternType.PREFIXED)])
    second = Authorizer(FileAclStore(tmp_path))
    second.start()
    assert allowed(second, ALICE, Op.READ, "sales-1")


@pytest.mark.parametrize("make", [
    lambda: ResourcePattern(RT.ANY, "x"),
    lambda: ResourcePattern(RT.TOPIC, "x", PatternType.MATCH),
    lambda: ResourcePattern(RT.TOPIC, "*", PatternType.PREFIXED),
    lambda: ResourcePattern(RT.CLUSTER, "other"),
    lambda: AccessControlEntry("alice", "*", Op.READ, Perm.ALLOW),
    lambda: AccessControlEntry(ALICE, "*", Op.ANY, Perm.ALLOW),
    lambda: AccessControlEntry(ALICE, "*", Op.READ, Perm.ANY),
])
def test_invalid_acls_are_refused(make) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidAclError):
        make()
