"""A 3-broker cluster that logs in to ZooKeeper with SASL DIGEST-MD5 and sets Kafka's ZooKeeper ACLs.

The brokers read their login from a JAAS file (``java.security.auth.login.config``, section ``Client``)
and run with ``zookeeper.set.acl=true``: every znode they create belongs to ``sasl:kafka``, is readable
by everyone except the credentials under ``/config/users``, and cannot be changed by anyone else. Topic
creation, replication and deletion go on as usual; a broker whose login is wrong or missing refuses to
start with a message naming the setting and the file.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError

from tests.support.admin_requests import create_topic, delete_topic, produce_one
from tests.support.broker_process import BrokerProcess
from tests.support.broker_under_test import require_spate
from tests.support.cluster import ClusterForTests, settled_cluster
from tests.support.zookeeper import WAIT_TIMEOUT_S, ZooKeeperForTests, running_zookeeper, write_client_jaas

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

USER, PASSWORD = "kafka", "kafka-secret"
# Starting, failing to log in and exiting: well under the 30 s connection timeout it must not wait out.
REFUSAL_BOUND_S = 20.0


@pytest.fixture(scope="module")
def zookeeper(broker_kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperForTests]:
    require_spate(broker_kind, "the test configures Spate's ZooKeeper login")
    with running_zookeeper(tmp_path_factory.mktemp("sasl-zookeeper"), {USER: PASSWORD}) as harness:
        yield harness


@pytest.fixture(scope="module")
def jaas_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_client_jaas(tmp_path_factory.mktemp("jaas") / "kafka_server_jaas.conf", USER, PASSWORD)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, zookeeper: ZooKeeperForTests,
            jaas_file: Path) -> Iterator[ClusterForTests]:
    overrides = {"java.security.auth.login.config": str(jaas_file), "zookeeper.set.acl": "true",
                 "offsets.topic.replication.factor": "3"}
    with settled_cluster(tmp_path_factory.mktemp("zk-acl-cluster"), zookeeper, overrides=overrides) as cluster:
        yield cluster


@pytest.fixture
def anonymous(zookeeper: ZooKeeperForTests, cluster: ClusterForTests) -> Iterator[KazooClient]:
    """A ZooKeeper client that does not log in, inside the cluster's chroot."""
    client = KazooClient(hosts=zookeeper.connect_string + cluster.chroot)
    client.start(timeout=WAIT_TIMEOUT_S)
    yield client
    client.stop()
    client.close()


def acl_of(client: KazooClient, path: str) -> list[tuple[str, str, int]]:
    acls, _ = client.get_acls(path)
    return sorted((acl.id.scheme, acl.id.id, acl.perms) for acl in acls)


KAFKA_ALL_WORLD_READ = [("sasl", USER, 31), ("world", "anyone", 1)]


def test_topics_are_created_replicated_and_deleted_as_usual(cluster: ClusterForTests) -> None:
    topic = "zk-acl-orders"
    assert create_topic(cluster.address(1), topic, partitions=2, replication_factor=3).error_code == 0
    cluster.wait_for_metadata([topic])
    leader = cluster.leader_of(topic)
    assert produce_one(cluster.address(leader), topic).error_code == 0

    def full_isr() -> bool:
        (metadata,) = cluster.metadata(1, [topic]).topics
        return all(sorted(p.isr_nodes) == [1, 2, 3] for p in metadata.partitions)

    cluster.wait_for(full_isr, "every replica to join the ISR")
    assert delete_topic(cluster.address(2), topic) == 0
    cluster.wait_for(lambda: cluster.zk.exists(f"/brokers/topics/{topic}") is None, "the topic's znodes to go")


def test_everyone_may_read_the_brokers_znodes_but_only_the_brokers_may_change_them(
    cluster: ClusterForTests, anonymous: KazooClient
) -> None:
    topic = "zk-acl-readable"
    assert create_topic(cluster.address(1), topic, partitions=1, replication_factor=3).error_code == 0
    cluster.wait_for_metadata([topic])
    path = f"/brokers/topics/{topic}"
    assert b'"partitions"' in anonymous.get(path)[0]
    assert topic in anonymous.get_children("/brokers/topics")
    for znode in (path, f"{path}/partitions/0/state", "/brokers/ids/1", "/controller", "/brokers/topics"):
        assert acl_of(anonymous, znode) == KAFKA_ALL_WORLD_READ, znode
    with pytest.raises(NoAuthError):
        anonymous.set(path, b"{}")
    with pytest.raises(NoAuthError):
        anonymous.delete(f"{path}/partitions/0/state")
    with pytest.raises(NoAuthError):
        anonymous.create("/admin/delete_topics/" + topic)
    with pytest.raises(NoAuthError):
        anonymous.create("/brokers/ids/4", b"{}", ephemeral=True)
    with pytest.raises(NoAuthError):
        anonymous.get_children("/config/users")


def refused_start(base: Path, cluster: ClusterForTests, overrides: dict[str, str]) -> str:
    """Start one more broker with ``overrides``; returns its log once it has exited, failing if it serves."""
    broker = BrokerProcess(base, overrides={"zookeeper.connect": cluster.connect, "broker.id": "7",
                                            "zookeeper.connection.timeout.ms": "30000", **overrides})
    started = time.monotonic()
    try:
        with pytest.raises(RuntimeError, match="broker exited with"):
            broker.start(timeout=REFUSAL_BOUND_S)
    finally:
        broker.kill()
    assert time.monotonic() - started < REFUSAL_BOUND_S
    assert broker.exit_code not in (None, 0)
    return broker.log_tail(10)


def test_a_broker_whose_login_zookeeper_rejects_refuses_to_start(
    cluster: ClusterForTests, zookeeper: ZooKeeperForTests, tmp_path: Path
) -> None:
    wrong = write_client_jaas(tmp_path / "wrong_jaas.conf", USER, "not-the-password")
    log = refused_start(tmp_path / "broker", cluster, {"java.security.auth.login.config": str(wrong),
                                                      "zookeeper.set.acl": "true"})
    assert (f"ZooKeeper at {zookeeper.connect_string} rejected the SASL DIGEST-MD5 user 'kafka' "
            f"(section Client of JAAS file {wrong})") in log
    assert "not-the-password" not in log


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"java.security.auth.login.config": "{tmp}/absent.conf"},
         "java.security.auth.login.config={tmp}/absent.conf: JAAS file {tmp}/absent.conf does not exist"),
        ({"zookeeper.set.acl": "true"},
         "zookeeper.set.acl: is true, but the broker does not authenticate to ZooKeeper "
         "(java.security.auth.login.config is not set)"),
    ],
)
def test_a_broker_without_a_usable_login_refuses_to_start_naming_the_setting(
    cluster: ClusterForTests, tmp_path: Path, settings: dict[str, str], message: str
) -> None:
    overrides = {key: value.format(tmp=tmp_path) for key, value in settings.items()}
    assert message.format(tmp=tmp_path) in refused_start(tmp_path / "broker", cluster, overrides)
