"""Client quotas in ZooKeeper: Kafka's /config/users and /config/clients znodes, shared with SCRAM
credentials, with change notifications that other brokers' snapshots follow."""

from __future__ import annotations

import json
import time
from typing import Iterator

import pytest

from broker_core.cluster.zk.client import ZkSession
from broker_core.security.credentials import ZkScramCredentialStore
from broker_core.security.quotas.client_quota_entity import DEFAULT, ClientQuotaEntity
from broker_core.security.quotas.quota_store import ZkClientQuotaStore
from broker_core.security.sasl.scram import SCRAM_SHA_512, ScramCredential
from tests.support.zookeeper import ZooKeeperForTests

E = ClientQuotaEntity


@pytest.fixture
def chroot(zookeeper: ZooKeeperForTests) -> str:
    return zookeeper.new_chroot()


@pytest.fixture
def session(zookeeper: ZooKeeperForTests, chroot: str) -> Iterator[ZkSession]:
    yield zookeeper.session(chroot)


def config_of(session: ZkSession, path: str) -> dict:
    return json.loads(session.get(path)[0])["config"]


def test_quotas_go_where_kafka_keeps_them_with_a_notification(session: ZkSession) -> None:
    store = ZkClientQuotaStore(session)
    store.alter(E("alice", "app"), {"producer_byte_rate": 1024.0})
    store.alter(E(DEFAULT, None), {"consumer_byte_rate": 2048.0})
    store.alter(E(None, "a b"), {"request_percentage": 12.5})
    assert config_of(session, "/config/users/alice/clients/app") == {"producer_byte_rate": "1024.0"}
    assert config_of(session, "/config/users/<default>") == {"consumer_byte_rate": "2048.0"}
    assert config_of(session, "/config/clients/a%20b") == {"request_percentage": "12.5"}
    paths = sorted(json.loads(session.get(f"/config/changes/{n}")[0])["entity_path"]
                   for n in session.get_children("/config/changes"))
    assert paths == ["clients/a%20b", "users/<default>", "users/alice/clients/app"]
    assert store.snapshot() == {E("alice", "app"): {"producer_byte_rate": 1024.0},
                                E(DEFAULT, None): {"consumer_byte_rate": 2048.0},
                                E(None, "a b"): {"request_percentage": 12.5}}
    store.close()


def test_a_users_quotas_and_scram_credentials_share_the_znode(session: ZkSession) -> None:
    credential = ScramCredential.from_password(SCRAM_SHA_512, "pw", salt=b"salt")
    ZkScramCredentialStore(session).upsert("bob", SCRAM_SHA_512, credential)
    store = ZkClientQuotaStore(session)
    store.alter(E("bob", None), {"producer_byte_rate": 4096.0})
    assert set(config_of(session, "/config/users/bob")) == {"SCRAM-SHA-512", "producer_byte_rate"}
    assert ZkScramCredentialStore(session).get("bob", SCRAM_SHA_512) == credential
    store.alter(E("bob", None), {"producer_byte_rate": None})
    assert set(config_of(session, "/config/users/bob")) == {"SCRAM-SHA-512"}
    ZkScramCredentialStore(session).upsert("bob", SCRAM_SHA_512, credential)
    store.close()


def test_another_brokers_snapshot_follows_the_change_notifications(zookeeper: ZooKeeperForTests,
                                                                   session: ZkSession, chroot: str) -> None:
    writer = ZkClientQuotaStore(session)
    reader = ZkClientQuotaStore(zookeeper.session(chroot))
    writer.alter(E(None, "app"), {"producer_byte_rate": 100.0})
    deadline = time.monotonic() + 10
    while reader.snapshot() != {E(None, "app"): {"producer_byte_rate": 100.0}} and time.monotonic() < deadline:
        time.sleep(0.05)
    assert reader.snapshot() == {E(None, "app"): {"producer_byte_rate": 100.0}}
    writer.close()
    reader.close()
