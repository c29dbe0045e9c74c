"""The broker's ZooKeeper session over SASL DIGEST-MD5, and zookeeper.set.acl, against a real SASL ZooKeeper.

The server accepts the user ``kafka``; clients that do not log in may still connect, and the znodes' ACLs
decide what they may do, as in a Kafka deployment with ``zookeeper.set.acl=true``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError

from broker_core.cluster.zk.errors import ZooKeeperAuthenticationError
from broker_core.cluster.zk.store import ZkMetadataStore
from broker_core.cluster.zk.zk_sasl import ZkSaslLogin, login_from_jaas_file
from broker_core.cluster.zk.znodes.layout import PERSISTENT_PATHS
from broker_core.security.credentials import ZkScramCredentialStore
from broker_core.security.sasl.scram import SCRAM_SHA_512, ScramCredential
from tests.support.zookeeper import WAIT_TIMEOUT_S, ZooKeeperForTests, running_zookeeper, write_client_jaas

pytestmark = pytest.mark.timeout(120)

USER, PASSWORD = "kafka", "kafka-secret"
SENSITIVE = ("/config/users", "/config/brokers")


@pytest.fixture(scope="module")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperForTests]:
    with running_zookeeper(tmp_path_factory.mktemp("sasl-zookeeper"), {USER: PASSWORD}) as harness:
        yield harness


@pytest.fixture(scope="module")
def login(tmp_path_factory: pytest.TempPathFactory) -> ZkSaslLogin:
    return login_from_jaas_file(write_client_jaas(tmp_path_factory.mktemp("jaas") / "jaas.conf", USER, PASSWORD))


@pytest.fixture
def anonymous(zookeeper: ZooKeeperForTests) -> Iterator[KazooClient]:
    client = KazooClient(hosts=zookeeper.connect_string)
    client.start(timeout=WAIT_TIMEOUT_S)
    yield client
    client.stop()
    client.close()


@pytest.fixture
def as_kafka(zookeeper: ZooKeeperForTests, login: ZkSaslLogin) -> Iterator[KazooClient]:
    client = KazooClient(hosts=zookeeper.connect_string, sasl_options=login.kazoo_sasl_options())
    client.start(timeout=WAIT_TIMEOUT_S)
    yield client
    client.stop()
    client.close()


def acl_of(client: KazooClient, path: str) -> list[tuple[str, str, int]]:
    acls, _ = client.get_acls(path)
    return sorted((acl.id.scheme, acl.id.id, acl.perms) for acl in acls)


KAFKA_ALL = ("sasl", USER, 31)
WORLD_READ = ("world", "anyone", 1)
WORLD_ALL = ("world", "anyone", 31)


def test_a_secured_store_gives_its_chroot_and_persistent_paths_kafkas_acls(
    zookeeper: ZooKeeperForTests, login: ZkSaslLogin, as_kafka: KazooClient
) -> None:
    chroot = zookeeper.new_chroot()
    store = ZkMetadataStore(zookeeper.session(chroot, sasl=login, set_acl=True))
    try:
        assert store.cluster_id()
    finally:
        store.close()
    assert acl_of(as_kafka, chroot) == sorted([KAFKA_ALL, WORLD_READ])
    for path in PERSISTENT_PATHS:
        expected = ([WORLD_ALL] if path == "/consumers" else [KAFKA_ALL] if path in SENSITIVE
                    else sorted([KAFKA_ALL, WORLD_READ]))
        assert acl_of(as_kafka, chroot + path) == expected, path
    assert acl_of(as_kafka, chroot + "/cluster/id") == sorted([KAFKA_ALL, WORLD_READ])


def test_clients_that_do_not_log_in_read_topics_but_cannot_change_them_nor_read_credentials(
    zookeeper: ZooKeeperForTests, login: ZkSaslLogin, anonymous: KazooClient
) -> None:
    chroot = zookeeper.new_chroot()
    session = zookeeper.session(chroot, sasl=login, set_acl=True)
    session.ensure_path("/brokers/topics")
    session.create("/brokers/topics/orders", b'{"partitions":{}}')
    ZkScramCredentialStore(session).upsert("alice", SCRAM_SHA_512,
                                           ScramCredential.from_password(SCRAM_SHA_512, "alice-secret"))

    assert anonymous.get(chroot + "/brokers/topics/orders")[0] == b'{"partitions":{}}'
    assert anonymous.get_children(chroot + "/brokers/topics") == ["orders"]
    with pytest.raises(NoAuthError):
        anonymous.set(chroot + "/brokers/topics/orders", b"{}")
    with pytest.raises(NoAuthError):
        anonymous.delete(chroot + "/brokers/topics/orders")
    with pytest.raises(NoAuthError):
        anonymous.create(chroot + "/brokers/topics/intruder", b"{}")
    with pytest.raises(NoAuthError):
        anonymous.get(chroot + "/config/users/alice")
    with pytest.raises(NoAuthError):
        anonymous.get_children(chroot + "/config/users")
    assert session.get("/config/users/alice")[0]  # the broker itself reads them


def test_without_set_acl_a_logged_in_session_creates_open_znodes(
    zookeeper: ZooKeeperForTests, login: ZkSaslLogin, as_kafka: KazooClient
) -> None:
    chroot = zookeeper.new_chroot()
    session = zookeeper.session(chroot, sasl=login)
    session.ensure_path("/config/users")
    assert acl_of(as_kafka, chroot + "/config/users") == [WORLD_ALL]


def test_a_rejected_login_fails_at_once_naming_the_user_and_the_jaas_file(
    zookeeper: ZooKeeperForTests, tmp_path: Path
) -> None:
    wrong = login_from_jaas_file(write_client_jaas(tmp_path / "wrong.conf", USER, "not-the-password"))
    for chroot in (None, zookeeper.new_chroot()):  # the chroot is created by a login of its own
        started = time.monotonic()
        with pytest.raises(ZooKeeperAuthenticationError) as info:
            zookeeper.session(chroot, sasl=wrong)
        assert time.monotonic() - started < 5
        assert str(info.value) == (
            f"ZooKeeper at {zookeeper.connect_string} rejected the SASL DIGEST-MD5 user 'kafka' "
            f"(section Client of JAAS file {tmp_path / 'wrong.conf'}): check the username and password there, "
            f"and that the server enables SASL (authProvider.sasl=org.apache.zookeeper.server.auth."
            f"SASLAuthenticationProvider and a JAAS Server section)"
        )
        assert "not-the-password" not in str(info.value)
