"""The ACL of each new znode under zookeeper.set.acl: Kafka's ZkData.defaultAcls rule."""

from __future__ import annotations

import pytest
from kazoo.security import CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE

from broker_core.cluster.zk.znode_acls import ZnodeAcls, default_acls, is_sensitive_path

CREATOR_ALL_AND_WORLD_READ = list(CREATOR_ALL_ACL) + list(READ_ACL_UNSAFE)


@pytest.mark.parametrize(
    "path", ["/brokers", "/brokers/topics/orders", "/brokers/ids/1", "/controller", "/config", "/config/topics/t",
             "/config/clients/app", "/config/changes/config_change_", "/kafka-acl/Topic/orders", "/admin/delete_topics",
             "/cluster/id", "/latest_producer_id_block", "/isr_change_notification"],
)
def test_znodes_are_the_creators_and_world_readable(path: str) -> None:
    assert default_acls(path, secure=True) == CREATOR_ALL_AND_WORLD_READ


@pytest.mark.parametrize(
    "path", ["/config/users", "/config/users/alice", "/config/brokers", "/config/brokers/1",
             "/config/brokers/<default>", "/delegation_token/tokens", "/delegation_token/tokens/t1"],
)
def test_credentials_and_broker_secrets_are_the_creators_alone(path: str) -> None:
    assert is_sensitive_path(path)
    assert default_acls(path, secure=True) == list(CREATOR_ALL_ACL)


def test_the_rule_is_a_prefix_test_as_in_kafka() -> None:
    # Kafka's sensitivePath is String.startsWith: a sibling sharing the prefix is sensitive too.
    assert is_sensitive_path("/config/usersettings")
    assert not is_sensitive_path("/config/user")
    assert not is_sensitive_path("/delegation_token")


def test_the_old_consumers_root_stays_open() -> None:
    assert default_acls("/consumers", secure=True) == list(OPEN_ACL_UNSAFE)
    assert default_acls("/consumers/group", secure=True) == CREATOR_ALL_AND_WORLD_READ


def test_without_set_acl_every_znode_is_open() -> None:
    assert default_acls("/config/users/alice", secure=False) == list(OPEN_ACL_UNSAFE)
    assert ZnodeAcls(secure=False).for_path("/brokers") is None  # ZooKeeper's own default


class RecordingTransaction:
    def __init__(self) -> None:
        self.creates: list[tuple[str, object]] = []
        self.deleted: list[str] = []

    def create(self, path, value=b"", acl=None, ephemeral=False, sequence=False) -> None:
        self.creates.append((path, acl))

    def delete(self, path, version=-1) -> None:
        self.deleted.append(path)


def test_transactions_create_with_each_paths_acl_and_pass_other_steps_through() -> None:
    inner = RecordingTransaction()
    transaction = ZnodeAcls(secure=True).transaction(inner)
    transaction.create("/brokers/topics/t", b"{}")
    transaction.create("/config/users/bob", b"{}")
    transaction.delete("/admin/delete_topics/t")
    assert inner.creates == [("/brokers/topics/t", CREATOR_ALL_AND_WORLD_READ),
                             ("/config/users/bob", list(CREATOR_ALL_ACL))]
    assert inner.deleted == ["/admin/delete_topics/t"]
    assert ZnodeAcls(secure=False).transaction(inner) is inner
