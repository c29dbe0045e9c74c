"""Metadata answers of real broker processes stay fresh although their topic entries are cached.

Each answer is asked for twice before a change, so the second comes from
the broker's answer cache; the first answer after the change must show it.
An embedded broker changes its own metadata (CreatePartitions,
DeleteTopics); a cluster broker hears of changes from the controller,
played by the test, in UpdateMetadata.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.metadata import MetadataRequest
from tests.support.admin_requests import create_partitions, create_topic, delete_topic
from tests.support.broker_process import BrokerProcess, running_broker
from tests.support.cluster import FAKE_CONTROLLER_ID, ClusterForTests, running_cluster
from tests.support.controller_requests import FakeController, PartitionSpec, call
from tests.support.played_controller import update_metadata

E = ErrorCode


def metadata(address: str, topic: str, version: int = 12) -> Any:
    """The topic's entry in a Metadata answer, asked for twice: the second answer is the one returned."""
    body = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False)
    call(address, ApiKey.METADATA, version, body)
    (described,) = call(address, ApiKey.METADATA, version, body).topics
    return described


def leaders(described: Any) -> dict[int, tuple[int, int, list[int]]]:
    assert described.error_code == E.NONE
    return {p.partition_index: (p.error_code, p.leader_id, p.isr_nodes) for p in described.partitions}


@pytest.fixture(scope="module")
def broker(tmp_path_factory) -> Iterator[BrokerProcess]:
    with running_broker(BrokerProcess(tmp_path_factory.mktemp("embedded"))) as running:
        yield running


def test_embedded_new_partitions_are_in_the_next_answer(broker: BrokerProcess, unique) -> None:
    topic = unique("grown")
    assert create_topic(broker.bootstrap, topic, partitions=20, replication_factor=1).error_code == E.NONE
    assert sorted(leaders(metadata(broker.bootstrap, topic))) == list(range(20))
    assert sorted(leaders(metadata(broker.bootstrap, topic, version=1))) == list(range(20))
    assert create_partitions(broker.bootstrap, topic, 30).error_code == E.NONE
    assert sorted(leaders(metadata(broker.bootstrap, topic))) == list(range(30))
    assert sorted(leaders(metadata(broker.bootstrap, topic, version=1))) == list(range(30))


def test_embedded_a_deleted_topic_is_unknown_and_its_successor_new(broker: BrokerProcess, unique) -> None:
    topic = unique("reborn")
    assert create_topic(broker.bootstrap, topic, partitions=4, replication_factor=1).error_code == E.NONE
    old_id = metadata(broker.bootstrap, topic).topic_id
    assert delete_topic(broker.bootstrap, topic) == E.NONE
    assert metadata(broker.bootstrap, topic).error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    assert create_topic(broker.bootstrap, topic, partitions=2, replication_factor=1).error_code == E.NONE
    reborn = metadata(broker.bootstrap, topic)
    assert reborn.topic_id != old_id and sorted(leaders(reborn)) == [0, 1]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, zookeeper) -> Iterator[ClusterForTests]:
    with running_cluster(tmp_path_factory.mktemp("cluster"), zookeeper, brokers=2, claim_controller=True,
                         overrides={"offsets.topic.num.partitions": "1"}) as running:
        yield running


def test_cluster_leader_isr_and_partition_changes_are_in_the_next_answer(cluster: ClusterForTests,
                                                                          unique) -> None:
    controller = FakeController(controller_id=FAKE_CONTROLLER_ID, epoch=1)
    topic = unique("moving")
    address = cluster.address(2)
    update_metadata(cluster, controller, [PartitionSpec(topic, p, 1, replicas=(1, 2)) for p in (0, 1)])
    assert leaders(metadata(address, topic)) == {0: (E.NONE, 1, [1, 2]), 1: (E.NONE, 1, [1, 2])}

    update_metadata(cluster, controller, [PartitionSpec(topic, 0, 2, leader_epoch=1, replicas=(1, 2), isr=(2,))])
    assert leaders(metadata(address, topic)) == {0: (E.NONE, 2, [2]), 1: (E.NONE, 1, [1, 2])}

    update_metadata(cluster, controller, [PartitionSpec(topic, 1, 1, leader_epoch=1, replicas=(1, 2), isr=(1,))])
    assert leaders(metadata(address, topic))[1] == (E.NONE, 1, [1])

    update_metadata(cluster, controller, [PartitionSpec(topic, 2, 2, replicas=(2, 1))])
    assert sorted(leaders(metadata(address, topic))) == [0, 1, 2]

    update_metadata(cluster, controller, controller.deleting(topic, [0, 1, 2]))
    assert metadata(address, topic).error_code == E.UNKNOWN_TOPIC_OR_PARTITION
