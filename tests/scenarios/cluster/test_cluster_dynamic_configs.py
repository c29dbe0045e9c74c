"""Dynamic broker configs in a cluster: kept in ZooKeeper's /config/brokers, followed by every broker."""

from __future__ import annotations

import json
from typing import Iterator

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource

from tests.support.cluster import ClusterForTests, settled_cluster
from tests.support.zookeeper import ZooKeeperForTests

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

TIMEOUT = 15.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, zookeeper: ZooKeeperForTests) -> Iterator[ClusterForTests]:
    with settled_cluster(tmp_path_factory.mktemp("dyn"), zookeeper, brokers=2,
                         overrides={"offsets.topic.num.partitions": "3"}) as running:
        yield running


def set_configs(address: str, name: str, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": address})
    entries = [ConfigEntry(k.replace("_", "."), v, incremental_operation=AlterConfigOpType.SET)
               for k, v in configs.items()]
    (future,) = admin.incremental_alter_configs(
        [ConfigResource(ConfigResource.Type.BROKER, name, incremental_configs=entries)]).values()
    future.result(timeout=TIMEOUT)


def broker_entry(cluster: ClusterForTests, broker_id: int, config: str):
    admin = AdminClient({"bootstrap.servers": cluster.address(broker_id)})
    (future,) = admin.describe_configs([ConfigResource(ConfigResource.Type.BROKER, str(broker_id))]).values()
    return future.result(timeout=TIMEOUT)[config]


def test_a_broker_config_is_stored_in_its_znode_with_a_change_notification(cluster: ClusterForTests) -> None:
    set_configs(cluster.address(1), "1", log_retention_ms="3600000")

    data, _ = cluster.zk.get("/config/brokers/1")
    assert json.loads(data)["config"] == {"log.retention.ms": "3600000"}
    changes = cluster.zk.get_children("/config/changes")
    notes = [json.loads(cluster.zk.get(f"/config/changes/{c}")[0]) for c in changes]
    assert {"version": 2, "entity_path": "brokers/1"} in notes
    entry = broker_entry(cluster, 1, "log.retention.ms")
    assert (entry.value, ConfigSource(entry.source)) == ("3600000", ConfigSource.DYNAMIC_BROKER_CONFIG)
    # The other broker keeps its own value.
    assert ConfigSource(broker_entry(cluster, 2, "log.retention.ms").source) != ConfigSource.DYNAMIC_BROKER_CONFIG


def test_every_broker_follows_a_cluster_default(cluster: ClusterForTests, zookeeper: ZooKeeperForTests) -> None:
    # Written as kafka-configs.sh --zookeeper once did: the znode and a notification, no request to a broker.
    from broker_core.cluster.zk.config_entity_zk import update_config_entity

    cluster.zk.ensure_path("/config/brokers")
    update_config_entity(cluster.zk, "brokers/<default>", lambda current: {**current, "log.segment.bytes": "2097152"})

    def followed() -> bool:
        entry = broker_entry(cluster, 2, "log.segment.bytes")
        return (entry.value, ConfigSource(entry.source)) == (
            "2097152", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)

    cluster.wait_for(followed, "broker 2 to follow the new cluster default", timeout=30)
    assert broker_entry(cluster, 1, "log.segment.bytes").value == "2097152"
