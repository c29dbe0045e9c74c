"""The ZooKeeper ACL store: Kafka's znodes and notifications, and brokers following each other's changes."""

from __future__ import annotations

import json
import time

from broker_core.security.authorizer.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from broker_core.security.authorizer.acl_store import ZkAclStore
from broker_core.security.authorizer.authorizer import Authorizer
from tests.support.zookeeper import ZooKeeperForTests

READ_ORDERS = AclBinding(ResourcePattern(ResourceType.TOPIC, "orders"),
                         AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW))
DENY_PREFIX = AclBinding(ResourcePattern(ResourceType.GROUP, "team-", PatternType.PREFIXED),
                         AccessControlEntry("User:*", "10.0.0.9", AclOperation.ALL, AclPermissionType.DENY))


def wait_until(check, what: str, timeout_s: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_acls_are_kept_in_kafkas_znodes_with_change_notifications(zookeeper: ZooKeeperForTests) -> None:
    session = zookeeper.session(zookeeper.new_chroot())
    authorizer = Authorizer(ZkAclStore(session))
    authorizer.start()
    try:
        authorizer.create([READ_ORDERS, DENY_PREFIX])
        data, _ = session.get("/kafka-acl/Topic/orders")
        assert json.loads(data) == {"version": 1, "acls": [
            {"principal": "User:alice", "permissionType": "Allow", "operation": "Read", "host": "*"}]}
        data, _ = session.get("/kafka-acl-extended/prefixed/Group/team-")
        assert json.loads(data)["acls"] == [
            {"principal": "User:*", "permissionType": "Deny", "operation": "All", "host": "10.0.0.9"}]
        (literal,) = session.get_children("/kafka-acl-changes")
        assert literal.startswith("acl_changes_")
        assert session.get(f"/kafka-acl-changes/{literal}")[0] == b"Topic:orders"
        (extended,) = session.get_children("/kafka-acl-extended-changes")
        assert json.loads(session.get(f"/kafka-acl-extended-changes/{extended}")[0]) == {
            "version": 1, "resourceType": "Group", "name": "team-", "patternType": "PREFIXED"}
        authorizer.delete([AclBindingFilter(resource_type=ResourceType.TOPIC)])
        assert session.exists("/kafka-acl/Topic/orders") is None, "an emptied resource's znode goes"
    finally:
        authorizer.close()


def test_a_broker_follows_the_acls_another_one_changes(zookeeper: ZooKeeperForTests) -> None:
    chroot = zookeeper.new_chroot()
    writer = Authorizer(ZkAclStore(zookeeper.session(chroot)))
    follower = Authorizer(ZkAclStore(zookeeper.session(chroot)))
    writer.start()
    follower.start()
    try:
        assert not follower.authorize("User:alice", "h", AclOperation.READ, ResourceType.TOPIC, "orders")
        writer.create([READ_ORDERS])
        wait_until(lambda: follower.authorize("User:alice", "h", AclOperation.READ, ResourceType.TOPIC, "orders"),
                   "the follower did not see the new ACL")
        writer.delete([AclBindingFilter(principal="User:alice")])
        wait_until(lambda: not follower.authorize("User:alice", "h", AclOperation.READ, ResourceType.TOPIC,
                                                  "orders"), "the follower did not see the ACL go")
    finally:
        writer.close()
        follower.close()


def test_a_starting_broker_loads_the_stored_acls(zookeeper: ZooKeeperForTests) -> None:
    chroot = zookeeper.new_chroot()
    first = Authorizer(ZkAclStore(zookeeper.session(chroot)))
    first.start()
    first.create([READ_ORDERS, DENY_PREFIX])
    first.close()
    second = Authorizer(ZkAclStore(zookeeper.session(chroot)))
    second.start()
    try:
        assert set(second.snapshot.bindings()) == {READ_ORDERS, DENY_PREFIX}
    finally:
        second.close()
