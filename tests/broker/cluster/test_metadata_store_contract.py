"""The MetadataStore contract, run against every store: CRUD, durability, conditional writes, watches.

Each test runs twice: on the embedded file store and on the ZooKeeper store
(a real ZooKeeper, one per module, a fresh chroot per test).
"""

from __future__ import annotations

import threading
import uuid
from typing import Callable, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker_core.cluster.errors import (
    BrokerAlreadyRegisteredError,
    InvalidPartitionsError,
    InvalidPartitionStateError,
    InvalidReplicaAssignmentError,
    InvalidTopicNameError,
    MetadataError,
    StaleVersionError,
    TopicExistsError,
    UnknownBrokerError,
    UnknownPartitionError,
    UnknownTopicError,
)
from broker_core.cluster.metadata_store import (
    NO_LEADER,
    BrokerRegistration,
    ChangeKind,
    MetadataChange,
    MetadataStore,
    PartitionState,
)
from tests.broker.cluster.metadata_store_backends import Backend, LocalBackend, ZooKeeperBackend


def counting_ids() -> Callable[[], uuid.UUID]:
    counter = iter(range(100, 10_000))
    return lambda: uuid.UUID(int=next(counter))


@pytest.fixture(params=["local", "zookeeper"])
def backend(request, tmp_path) -> Iterator[Backend]:
    opened = LocalBackend(tmp_path) if request.param == "local" else ZooKeeperBackend(request.getfixturevalue("zookeeper"))
    yield opened
    opened.close()


@pytest.fixture
def store(backend: Backend) -> MetadataStore:
    return backend.open(id_source=counting_ids())


def test_the_store_implements_the_metadata_store_interface(store: MetadataStore) -> None:
    assert isinstance(store, MetadataStore)


# --- cluster id -------------------------------------------------------------------


def test_cluster_id_is_22_chars_of_url_safe_base64_and_survives_reopen(backend: Backend) -> None:
    first = backend.open()
    cluster_id = first.cluster_id()
    first.close()
    assert len(cluster_id) == 22
    assert set(cluster_id) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    second = backend.open()
    assert second.cluster_id() == cluster_id


def test_cluster_id_never_starts_with_a_dash(backend: Backend) -> None:
    ids = iter([uuid.UUID(bytes=b"\xf8" + bytes(15)), uuid.UUID(int=5)])  # first encodes to "-A..."
    opened = backend.open(id_source=lambda: next(ids))
    assert not opened.cluster_id().startswith("-")


# --- brokers ----------------------------------------------------------------------


def test_brokers_register_list_and_unregister(store: MetadataStore) -> None:
    store.register_broker(BrokerRegistration(2, "h2", 9093, rack="r1"))
    store.register_broker(BrokerRegistration(1, "h1", 9092))
    assert store.list_brokers() == [BrokerRegistration(1, "h1", 9092), BrokerRegistration(2, "h2", 9093, "r1")]
    store.unregister_broker(1)
    assert [b.broker_id for b in store.list_brokers()] == [2]


def test_registering_a_taken_broker_id_fails(store: MetadataStore) -> None:
    store.register_broker(BrokerRegistration(1, "h1", 9092))
    with pytest.raises(BrokerAlreadyRegisteredError, match="broker id 1"):
        store.register_broker(BrokerRegistration(1, "other", 9093))


def test_unregistering_an_unknown_broker_fails(store: MetadataStore) -> None:
    with pytest.raises(UnknownBrokerError):
        store.unregister_broker(9)


def test_broker_registrations_do_not_survive_reopen(backend: Backend) -> None:
    first = backend.open()
    first.register_broker(BrokerRegistration(0, "h", 9092))
    first.close()
    second = backend.open()
    assert second.list_brokers() == []


# --- topics ----------------------------------------------------------------------------


def test_create_topic_starts_partitions_with_first_replica_leading(store: MetadataStore) -> None:
    topic = store.create_topic("orders", {0: [1, 2], 1: [2, 1]}, {"retention.ms": "1000"}, controller_epoch=3)
    assert topic.topic_id == uuid.UUID(int=101)  # 100 went to the cluster id
    assert topic.partition_count == 2 and topic.replication_factor == 2
    assert topic.partitions[1] == PartitionState(
        leader=2, leader_epoch=0, isr=(2, 1), replicas=(2, 1), controller_epoch=3, version=0
    )
    assert store.get_topic("orders") == topic
    assert store.get_topic_configs("orders") == {"retention.ms": "1000"}
    assert store.list_topics() == ["orders"]


def test_topic_ids_are_unique_and_never_reserved(backend: Backend) -> None:
    ids = iter([uuid.UUID(int=50), uuid.UUID(int=0), uuid.UUID(int=1), uuid.UUID(int=7), uuid.UUID(int=7), uuid.UUID(int=8)])
    opened = backend.open(id_source=lambda: next(ids))
    assert opened.create_topic("a", {0: [0]}).topic_id == uuid.UUID(int=7)
    assert opened.create_topic("b", {0: [0]}).topic_id == uuid.UUID(int=8)


def test_creating_an_existing_topic_fails(store: MetadataStore) -> None:
    store.create_topic("orders", {0: [0]})
    with pytest.raises(TopicExistsError, match="'orders' already exists") as info:
        store.create_topic("orders", {0: [0]})
    assert info.value.error_code == 36


def test_creating_a_colliding_topic_fails(store: MetadataStore) -> None:
    store.create_topic("my.topic", {0: [0]})
    with pytest.raises(InvalidTopicNameError, match="collides with existing topic 'my.topic'"):
        store.create_topic("my_topic", {0: [0]})


def test_creating_a_dotted_topic_logs_the_collision_warning(backend: Backend, store: MetadataStore, caplog) -> None:
    with caplog.at_level("WARNING", logger=backend.collision_logger):
        store.create_topic("a.b", {0: [0]})
    assert "a.b" in caplog.text


@pytest.mark.parametrize(
    "name, assignment, error",
    [
        ("bad name", {0: [0]}, InvalidTopicNameError),
        ("..", {0: [0]}, InvalidTopicNameError),
        ("t", {}, InvalidPartitionsError),
        ("t", {1: [0]}, InvalidReplicaAssignmentError),
        ("t", {0: [0, 0]}, InvalidReplicaAssignmentError),
    ],
)
def test_invalid_creates_are_refused_and_change_nothing(
    backend: Backend, store: MetadataStore, name: str, assignment: dict, error: type
) -> None:
    before = backend.durable_state()
    with pytest.raises(error):
        store.create_topic(name, assignment)
    assert store.list_topics() == []
    assert backend.durable_state() == before


def test_delete_topic_removes_it_and_returns_it(store: MetadataStore) -> None:
    created = store.create_topic("orders", {0: [0]})
    assert store.delete_topic("orders") == created
    assert store.list_topics() == []
    with pytest.raises(UnknownTopicError):
        store.get_topic("orders")


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.get_topic("nope"),
        lambda s: s.delete_topic("nope"),
        lambda s: s.get_topic_configs("nope"),
        lambda s: s.set_topic_configs("nope", {}),
        lambda s: s.add_partitions("nope", {1: [0]}),
        lambda s: s.get_partition_state("nope", 0),
    ],
)
def test_operations_on_unknown_topics_raise_unknown_topic(store: MetadataStore, call) -> None:
    with pytest.raises(UnknownTopicError, match="'nope' does not exist") as info:
        call(store)
    assert info.value.error_code == 3


def test_add_partitions_appends_with_the_topics_replication_factor(store: MetadataStore) -> None:
    store.create_topic("orders", {0: [0, 1]})
    updated = store.add_partitions("orders", {1: [1, 0], 2: [0, 1]})
    assert updated.partition_count == 3
    assert store.get_partition_state("orders", 2) == PartitionState.initial([0, 1])


@pytest.mark.parametrize(
    "assignment, error",
    [
        ({}, InvalidPartitionsError),
        ({2: [0, 1]}, InvalidReplicaAssignmentError),
        ({0: [0, 1]}, InvalidReplicaAssignmentError),
        ({1: [0]}, InvalidReplicaAssignmentError),
    ],
)
def test_add_partitions_rejects_bad_assignments(store: MetadataStore, assignment: dict, error: type) -> None:
    store.create_topic("orders", {0: [0, 1]})
    with pytest.raises(error):
        store.add_partitions("orders", assignment)
    assert store.get_topic("orders").partition_count == 1


def test_topic_configs_are_replaced_as_a_whole(store: MetadataStore) -> None:
    store.create_topic("orders", {0: [0]}, {"retention.ms": "1", "segment.bytes": "1048576"})
    store.set_topic_configs("orders", {"cleanup.policy": "compact"})
    assert store.get_topic_configs("orders") == {"cleanup.policy": "compact"}


def test_returned_descriptions_cannot_be_mutated(store: MetadataStore) -> None:
    topic = store.create_topic("orders", {0: [0]}, {"a": "b"})
    with pytest.raises(TypeError):
        topic.configs["a"] = "c"  # type: ignore[index]
    with pytest.raises(TypeError):
        topic.partitions[1] = topic.partitions[0]  # type: ignore[index]


# --- partition state -------------------------------------------------------------------


def test_conditional_update_bumps_the_version(store: MetadataStore) -> None:
    store.create_topic("orders", {0: [0, 1]})
    current = store.get_partition_state("orders", 0)
    new = PartitionState(leader=1, leader_epoch=1, isr=(1,), replicas=(0, 1), controller_epoch=0, version=99)
    stored = store.update_partition_state("orders", 0, new, expected_version=current.version)
    assert stored.version == current.version + 1
    assert (stored.leader, stored.leader_epoch, stored.isr) == (1, 1, (1,))
    assert store.get_partition_state("orders", 0) == stored


def test_update_with_a_stale_version_fails_and_changes_nothing(store: MetadataStore) -> None:
    store.create_topic("orders", {0: [0, 1]})
    first = PartitionState(leader=1, leader_epoch=1, isr=(1,), replicas=(0, 1), controller_epoch=0)
    store.update_partition_state("orders", 0, first, expected_version=0)
    second = PartitionState(leader=0, leader_epoch=2, isr=(0,), replicas=(0, 1), controller_epoch=0)
    with pytest.raises(StaleVersionError, match="expected version 0, current version is 1") as info:
        store.update_partition_state("orders", 0, second, expected_version=0)
    assert (info.value.expected, info.value.actual) == (0, 1)
    assert store.get_partition_state("orders", 0).leader == 1


def test_update_of_an_unknown_partition_fails(store: MetadataStore) -> None:
    store.create_topic("orders", {0: [0]})
    with pytest.raises(UnknownPartitionError):
        store.update_partition_state("orders", 5, PartitionState.initial([0]), expected_version=0)


BAD_TRANSITIONS = [
    (PartitionState(leader=0, leader_epoch=-1, isr=(0,), replicas=(0, 1), controller_epoch=0), "leader epoch would go back"),
    (PartitionState(leader=2, leader_epoch=1, isr=(2,), replicas=(0, 1), controller_epoch=0), "must be distinct members"),
    (PartitionState(leader=1, leader_epoch=1, isr=(0,), replicas=(0, 1), controller_epoch=0), "not in the ISR"),
    (PartitionState(leader=0, leader_epoch=1, isr=(0, 0), replicas=(0, 1), controller_epoch=0), "must be distinct"),
    (PartitionState(leader=0, leader_epoch=1, isr=(0,), replicas=(), controller_epoch=0), "non-empty"),
    (PartitionState(leader=0, leader_epoch=1, isr=(0,), replicas=(0, 1), controller_epoch=-1), "controller epoch"),
]


@pytest.mark.parametrize("state, message", BAD_TRANSITIONS)
def test_updates_that_break_leadership_invariants_are_refused(store: MetadataStore, state, message) -> None:
    store.create_topic("orders", {0: [0, 1]})
    with pytest.raises(InvalidPartitionStateError, match=message):
        store.update_partition_state("orders", 0, state, expected_version=0)


def test_leaderless_state_is_allowed(store: MetadataStore) -> None:
    store.create_topic("orders", {0: [0, 1]})
    offline = PartitionState(leader=NO_LEADER, leader_epoch=1, isr=(0,), replicas=(0, 1), controller_epoch=0)
    assert store.update_partition_state("orders", 0, offline, expected_version=0).leader == NO_LEADER


# --- durability -----------------------------------------------------------------------------


def test_everything_but_brokers_survives_reopen(backend: Backend) -> None:
    first = backend.open()
    created = first.create_topic("orders", {0: [0, 1], 1: [1, 0]}, {"retention.ms": "5"})
    new_state = PartitionState(leader=0, leader_epoch=4, isr=(0,), replicas=(1, 0), controller_epoch=2)
    moved = first.update_partition_state("orders", 1, new_state, expected_version=0)
    first.create_topic("gone", {0: [0]})
    first.delete_topic("gone")
    first.close()
    second = backend.open()
    reopened = second.get_topic("orders")
    assert reopened.topic_id == created.topic_id
    assert reopened.partitions[1] == moved
    assert reopened.configs == {"retention.ms": "5"}
    assert second.list_topics() == ["orders"]


def test_producer_id_blocks_are_monotonic_across_reopen(backend: Backend) -> None:
    first = backend.open()
    a = first.allocate_producer_id_block(0)
    b = first.allocate_producer_id_block(1, size=10)
    first.close()
    c = backend.open().allocate_producer_id_block(0)
    assert (a.first, a.last, a.size) == (0, 999, 1000)
    assert (b.first, b.last, b.broker_id) == (1000, 1009, 1)
    assert (c.first, c.last) == (1010, 2009)


def test_producer_id_block_size_must_be_positive(store: MetadataStore) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        store.allocate_producer_id_block(0, size=0)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(1, 5000), st.booleans()), min_size=1, max_size=12))
def test_producer_id_blocks_never_overlap_whatever_the_sizes_and_reopens(backend: Backend, plan) -> None:
    place = backend.fresh()
    store = place.open()
    previous_last = -1
    try:
        for size, reopen in plan:
            block = store.allocate_producer_id_block(0, size=size)
            assert block.first == previous_last + 1 and block.size == size
            previous_last = block.last
            if reopen:
                store.close()
                store = place.open()
    finally:
        store.close()


def test_writes_after_close_are_refused(backend: Backend) -> None:
    opened = backend.open()
    opened.close()
    with pytest.raises(MetadataError, match="closed"):
        opened.create_topic("orders", {0: [0]})


# --- concurrency and watches ---------------------------------------------------------------------


def test_concurrent_allocations_from_many_threads_are_disjoint(store: MetadataStore) -> None:
    blocks = []
    lock = threading.Lock()

    def allocate() -> None:
        for _ in range(10):
            block = store.allocate_producer_id_block(0, size=7)
            with lock:
                blocks.append(block)

    threads = [threading.Thread(target=allocate) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ranges = sorted((b.first, b.last) for b in blocks)
    assert ranges == [(i * 7, i * 7 + 6) for i in range(60)]


def test_watchers_hear_each_change_in_commit_order(store: MetadataStore) -> None:
    seen: list[MetadataChange] = []
    store.watch(seen.append)
    store.register_broker(BrokerRegistration(0, "h", 9092))
    store.create_topic("orders", {0: [0]})
    store.add_partitions("orders", {1: [0]})
    led = PartitionState(leader=0, leader_epoch=1, isr=(0,), replicas=(0,), controller_epoch=0)
    store.update_partition_state("orders", 1, led, expected_version=0)
    store.set_topic_configs("orders", {})
    store.delete_topic("orders")
    store.unregister_broker(0)
    assert seen == [
        MetadataChange(ChangeKind.BROKER_REGISTERED, broker_id=0),
        MetadataChange(ChangeKind.TOPIC_CREATED, topic="orders", partitions=(0,)),
        MetadataChange(ChangeKind.PARTITIONS_ADDED, topic="orders", partitions=(1,)),
        MetadataChange(ChangeKind.PARTITION_STATE_CHANGED, topic="orders", partitions=(1,)),
        MetadataChange(ChangeKind.TOPIC_CONFIG_CHANGED, topic="orders"),
        MetadataChange(ChangeKind.TOPIC_DELETED, topic="orders", partitions=(0, 1)),
        MetadataChange(ChangeKind.BROKER_UNREGISTERED, broker_id=0),
    ]


def test_a_watcher_sees_the_change_already_applied_and_may_write_back(store: MetadataStore) -> None:
    seen: list[tuple[ChangeKind, list[str]]] = []

    def listener(change: MetadataChange) -> None:
        seen.append((change.kind, store.list_topics()))
        if change.kind is ChangeKind.TOPIC_CREATED and change.topic == "orders":
            store.create_topic("orders-audit", {0: [0]})

    store.watch(listener)
    store.create_topic("orders", {0: [0]})
    assert seen == [
        (ChangeKind.TOPIC_CREATED, ["orders"]),
        (ChangeKind.TOPIC_CREATED, ["orders", "orders-audit"]),
    ]


def test_a_failing_watcher_does_not_fail_the_write_or_other_watchers(
    backend: Backend, store: MetadataStore, caplog
) -> None:
    seen: list[MetadataChange] = []

    def broken(change: MetadataChange) -> None:
        raise RuntimeError("listener bug")

    store.watch(broken)
    store.watch(seen.append)
    with caplog.at_level("ERROR", logger=backend.listener_logger):
        store.create_topic("orders", {0: [0]})
    assert store.list_topics() == ["orders"]
    assert len(seen) == 1
    assert "listener failed" in caplog.text


def test_stopping_a_watch_stops_notifications(store: MetadataStore) -> None:
    seen: list[MetadataChange] = []
    stop = store.watch(seen.append)
    store.create_topic("a", {0: [0]})
    stop()
    store.create_topic("b", {0: [0]})
    assert [change.topic for change in seen] == ["a"]


def test_producer_id_allocation_is_not_a_watched_change(store: MetadataStore) -> None:
    seen: list[MetadataChange] = []
    store.watch(seen.append)
    store.allocate_producer_id_block(0)
    assert seen == []
