"""What only the ZooKeeper store does: Kafka's znodes, races between sessions, ephemerals, foreign changes.

The behaviour it shares with the embedded store is in ../test_metadata_store_contract.py.
"""

from __future__ import annotations

import json
import threading
import uuid
from typing import Iterator

import pytest

from broker_core.cluster.errors import BrokerAlreadyRegisteredError, StaleVersionError
from broker_core.cluster.metadata_store import (
    NO_LEADER,
    BrokerRegistration,
    ChangeKind,
    MetadataChange,
    PartitionState,
)
from broker_core.cluster.zk.errors import ZNodeDecodeError
from broker_core.cluster.zk.store import ZkMetadataStore
from broker_core.cluster.zk.znodes import TopicAssignment, TopicZNode
from tests.support.zookeeper import ZooKeeperForTests, expire_session, wait_until

TOPIC_ID = uuid.UUID(int=0x1234)


class Stores:
    """Stores over separate sessions on one chroot, as separate brokers would have."""

    def __init__(self, zookeeper: ZooKeeperForTests, chroot: str) -> None:
        self.zookeeper = zookeeper
        self.chroot = chroot
        self.opened: list[ZkMetadataStore] = []

    def open(self, **kwargs) -> ZkMetadataStore:
        store = ZkMetadataStore.connect(self.zookeeper.client_config(self.chroot), **kwargs)
        self.opened.append(store)
        return store


@pytest.fixture
def stores(zookeeper: ZooKeeperForTests, zk_chroot: str) -> Iterator[Stores]:
    opened = Stores(zookeeper, zk_chroot)
    yield opened
    for store in opened.opened:
        store.close()


def test_the_store_writes_kafkas_znodes(stores: Stores, zookeeper: ZooKeeperForTests) -> None:
    ids = iter([uuid.UUID(int=0xC1), TOPIC_ID])
    store = stores.open(id_source=lambda: next(ids), clock_ms=lambda: 1700000000000)
    store.register_broker(BrokerRegistration(0, "h0", 9092))
    store.create_topic("orders", {0: [0, 1], 1: [1, 0]}, {"retention.ms": "5"}, controller_epoch=2)
    store.set_topic_configs("orders", {"cleanup.policy": "compact"})
    store.allocate_producer_id_block(0)

    raw = zookeeper.session(stores.chroot)
    assert raw.get("/cluster/id")[0] == b'{"version":"1","id":"AAAAAAAAAAAAAAAAAAAAwQ"}'
    assert raw.get("/brokers/ids/0")[0] == (
        b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
        b'"endpoints":["PLAINTEXT://h0:9092"],"jmx_port":-1,"port":9092,"host":"h0","version":5,'
        b'"timestamp":"1700000000000"}'
    )
    assert raw.get("/brokers/ids/0")[1].ephemeralOwner == store.session.session_id
    assert raw.get("/brokers/topics/orders")[0] == (
        b'{"removing_replicas":{},"partitions":{"0":[0,1],"1":[1,0]},"topic_id":"AAAAAAAAAAAAAAAAAAASNA",'
        b'"adding_replicas":{},"version":3}'
    )
    assert sorted(raw.get_children("/brokers/topics/orders/partitions")) == ["0", "1"]
    assert raw.get("/brokers/topics/orders/partitions/1/state")[0] == (
        b'{"controller_epoch":2,"leader":1,"version":1,"leader_epoch":0,"isr":[1,0]}'
    )
    assert raw.get("/config/topics/orders")[0] == b'{"version":1,"config":{"cleanup.policy":"compact"}}'
    [notification] = raw.get_children("/config/changes")
    assert notification.startswith("config_change_") and len(notification) == len("config_change_") + 10
    assert json.loads(raw.get(f"/config/changes/{notification}")[0]) == {"version": 2, "entity_path": "topics/orders"}
    assert raw.get("/latest_producer_id_block")[0] == b'{"version":1,"broker":0,"block_start":"0","block_end":"999"}'

    store.delete_topic("orders")
    assert raw.get_children("/brokers/topics") == []
    assert raw.exists("/config/topics/orders") is None


def race(writers: dict[str, tuple[ZkMetadataStore, PartitionState]], version: int) -> dict[str, object]:
    """Start the writers together, each updating orders-0 from ``version``; what each got back."""
    barrier = threading.Barrier(len(writers))
    outcomes: dict[str, object] = {}

    def write(name: str, store: ZkMetadataStore, state: PartitionState) -> None:
        barrier.wait(timeout=10)
        try:
            outcomes[name] = store.update_partition_state("orders", 0, state, expected_version=version)
        except StaleVersionError as exc:
            outcomes[name] = exc

    threads = [threading.Thread(target=write, args=(name, *writer)) for name, writer in writers.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    return outcomes


def test_racing_state_writers_one_wins_and_the_other_is_stale(stores: Stores) -> None:
    controller, leader = stores.open(), stores.open()
    controller.create_topic("orders", {0: [0, 1]})
    for epoch in range(1, 6):
        version = controller.get_partition_state("orders", 0).version
        elect = PartitionState(leader=1, leader_epoch=epoch, isr=(1,), replicas=(0, 1), controller_epoch=0)
        shrink = PartitionState(leader=0, leader_epoch=epoch, isr=(0,), replicas=(0, 1), controller_epoch=0)
        outcomes = race({"controller": (controller, elect), "leader": (leader, shrink)}, version)
        stale = [o for o in outcomes.values() if isinstance(o, StaleVersionError)]
        won = [o for o in outcomes.values() if isinstance(o, PartitionState)]
        assert len(stale) == 1 and len(won) == 1, outcomes
        assert (stale[0].expected, stale[0].actual) == (version, version + 1)
        assert controller.get_partition_state("orders", 0) == won[0]


def test_a_registration_disappears_when_its_session_ends(stores: Stores) -> None:
    broker, observer = stores.open(), stores.open()
    broker.register_broker(BrokerRegistration(1, "h1", 9092))
    assert observer.list_brokers() == [BrokerRegistration(1, "h1", 9092)]
    broker.session.close()  # the broker dies without unregistering
    wait_until(lambda: observer.list_brokers() == [], "the ephemeral registration to go")


def test_a_second_broker_with_the_same_id_is_refused(stores: Stores) -> None:
    first, second = stores.open(), stores.open()
    first.register_broker(BrokerRegistration(1, "h1", 9092))
    with pytest.raises(BrokerAlreadyRegisteredError, match="broker id 1 is already registered"):
        second.register_broker(BrokerRegistration(1, "h2", 9093))
    assert second.list_brokers() == [BrokerRegistration(1, "h1", 9092)]
    first.close()
    second.register_broker(BrokerRegistration(1, "h2", 9093))
    assert second.list_brokers() == [BrokerRegistration(1, "h2", 9093)]


def test_producer_id_blocks_from_two_clients_never_overlap(stores: Stores) -> None:
    clients = [stores.open(), stores.open()]
    blocks = []
    lock = threading.Lock()

    def allocate(store: ZkMetadataStore, broker_id: int) -> None:
        for _ in range(15):
            block = store.allocate_producer_id_block(broker_id, size=10)
            with lock:
                blocks.append(block)

    threads = [threading.Thread(target=allocate, args=(c, i)) for i, c in enumerate(clients) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    ranges = sorted((b.first, b.last) for b in blocks)
    assert ranges == [(i * 10, i * 10 + 9) for i in range(90)]


def test_changes_made_through_another_session_reach_watchers(stores: Stores) -> None:
    writer, watcher = stores.open(), stores.open()
    seen: list[MetadataChange] = []
    threads: set[str] = set()

    def listener(change: MetadataChange) -> None:
        seen.append(change)
        threads.add(threading.current_thread().name)

    watcher.watch(listener)
    expected: list[MetadataChange] = []

    def step(change: MetadataChange) -> None:
        expected.append(change)
        wait_until(lambda: seen == expected, f"{change} to reach the watcher (seen {seen})")

    writer.register_broker(BrokerRegistration(0, "h", 9092))
    step(MetadataChange(ChangeKind.BROKER_REGISTERED, broker_id=0))
    writer.create_topic("orders", {0: [0]})
    step(MetadataChange(ChangeKind.TOPIC_CREATED, topic="orders", partitions=(0,)))
    writer.add_partitions("orders", {1: [0]})
    step(MetadataChange(ChangeKind.PARTITIONS_ADDED, topic="orders", partitions=(1,)))
    led = PartitionState(leader=0, leader_epoch=1, isr=(0,), replicas=(0,), controller_epoch=0)
    writer.update_partition_state("orders", 1, led, expected_version=0)
    step(MetadataChange(ChangeKind.PARTITION_STATE_CHANGED, topic="orders", partitions=(1,)))
    writer.set_topic_configs("orders", {"retention.ms": "1"})
    step(MetadataChange(ChangeKind.TOPIC_CONFIG_CHANGED, topic="orders"))
    writer.delete_topic("orders")
    step(MetadataChange(ChangeKind.TOPIC_DELETED, topic="orders", partitions=(0, 1)))
    writer.unregister_broker(0)
    step(MetadataChange(ChangeKind.BROKER_UNREGISTERED, broker_id=0))
    assert threads == {"zk-metadata-changes"}


def test_a_broker_registers_again_after_its_session_expires(stores: Stores, zookeeper: ZooKeeperForTests) -> None:
    broker, observer = stores.open(), stores.open()
    seen: list[MetadataChange] = []
    broker.register_broker(BrokerRegistration(5, "h5", 9092))
    broker.watch(seen.append)
    old_session = broker.session.session_id
    expire_session(zookeeper, broker.session)
    wait_until(lambda: broker.session.session_id not in (None, old_session), "a new session")
    wait_until(lambda: MetadataChange(ChangeKind.BROKER_REGISTERED, broker_id=5) in seen, "the re-registration")
    assert observer.list_brokers() == [BrokerRegistration(5, "h5", 9092)]
    owner = zookeeper.session(stores.chroot).get("/brokers/ids/5")[1].ephemeralOwner
    assert owner == broker.session.session_id


def test_malformed_znode_data_is_a_decode_error_naming_the_path(stores: Stores, zookeeper: ZooKeeperForTests) -> None:
    store = stores.open()
    zookeeper.session(stores.chroot).create("/brokers/topics/broken", b"{not json")
    with pytest.raises(ZNodeDecodeError, match="^znode /brokers/topics/broken: not valid JSON"):
        store.get_topic("broken")


def test_a_topic_without_partition_states_reads_leaderless_and_its_first_state_creates_the_znode(
    stores: Stores, zookeeper: ZooKeeperForTests
) -> None:
    # Kafka's tools create only the assignment; the controller writes the states at its first election.
    store = stores.open()
    raw = zookeeper.session(stores.chroot)
    raw.create("/brokers/topics/legacy", TopicZNode.encode(TopicAssignment(TOPIC_ID, {0: (2, 1)})))
    unelected = store.get_partition_state("legacy", 0)
    assert (unelected.leader, unelected.isr, unelected.replicas, unelected.version) == (NO_LEADER, (), (2, 1), -1)
    elected = PartitionState(leader=2, leader_epoch=0, isr=(2, 1), replicas=(2, 1), controller_epoch=1)
    assert store.update_partition_state("legacy", 0, elected, expected_version=-1).version == 0
    assert store.get_partition_state("legacy", 0) == PartitionState(2, 0, (2, 1), (2, 1), 1, version=0)


def test_a_state_write_with_new_replicas_reassigns_the_partition(stores: Stores) -> None:
    store = stores.open()
    store.create_topic("orders", {0: [0, 1], 1: [1, 0]})
    moved = PartitionState(leader=0, leader_epoch=1, isr=(0, 2), replicas=(0, 2), controller_epoch=0)
    store.update_partition_state("orders", 0, moved, expected_version=0)
    topic = stores.open().get_topic("orders")
    assert topic.assignment() == {0: (0, 2), 1: (1, 0)}
    assert topic.partitions[0] == PartitionState(0, 1, (0, 2), (0, 2), 0, version=1)
