"""A topic znode without a topic id (written by a Kafka before 2.8) is given one, as Kafka's controller does."""

from __future__ import annotations

import json
import uuid
from typing import Iterator

import pytest

from broker_core.cluster.zk.store import ZkMetadataStore
from broker_core.cluster.zk.topic_id_assignment import RESERVED_TOPIC_IDS, new_topic_id, with_topic_id
from broker_core.cluster.zk.znodes import TopicZNode
from tests.support.zookeeper import ZooKeeperForTests

# /brokers/topics/<t> as Kafka 2.7 writes it: version 2, no topic_id.
KAFKA_27_TOPIC = b'{"version":2,"partitions":{"0":[0],"1":[0]},"adding_replicas":{},"removing_replicas":{}}'


@pytest.fixture
def stores(zookeeper: ZooKeeperForTests, zk_chroot: str) -> Iterator[list[ZkMetadataStore]]:
    opened = [ZkMetadataStore.connect(zookeeper.client_config(zk_chroot)) for _ in range(2)]
    yield opened
    for store in opened:
        store.close()


def test_a_topic_without_an_id_gets_one_written_to_its_znode(stores, zookeeper, zk_chroot) -> None:
    raw = zookeeper.session(zk_chroot)
    raw.ensure_path("/brokers/topics")
    raw.create("/brokers/topics/legacy", KAFKA_27_TOPIC)
    topic = stores[0].get_topic("legacy")
    assert topic.topic_id not in RESERVED_TOPIC_IDS
    stored = json.loads(raw.get("/brokers/topics/legacy")[0])
    assert TopicZNode.decode("legacy", raw.get("/brokers/topics/legacy")[0]).topic_id == topic.topic_id
    assert stored["partitions"] == {"0": [0], "1": [0]}
    assert stores[1].get_topic("legacy").topic_id == topic.topic_id


def test_two_brokers_racing_to_assign_an_id_agree_on_one(stores, zookeeper, zk_chroot) -> None:
    raw = zookeeper.session(zk_chroot)
    raw.ensure_path("/brokers/topics")
    raw.create("/brokers/topics/legacy", KAFKA_27_TOPIC)
    data, stat = raw.get("/brokers/topics/legacy")
    read_before = TopicZNode.decode("legacy", data)
    first, _ = with_topic_id(stores[0].session, "legacy", read_before, stat.version)
    # The second read the znode before the first wrote: its conditional write loses, and it adopts the winner's id.
    second, version = with_topic_id(stores[1].session, "legacy", read_before, stat.version)
    assert second.topic_id == first.topic_id is not None
    assert version == raw.get("/brokers/topics/legacy")[1].version


def test_a_new_topic_id_is_never_a_reserved_one() -> None:
    candidates = iter([uuid.UUID(int=0), uuid.UUID(int=1), uuid.UUID(int=7)])
    assert new_topic_id(lambda: next(candidates)) == uuid.UUID(int=7)
