"""The metadata cache as UpdateMetadata feeds it: brokers, the controller, partial updates, deletions, waiters."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from broker_core.cluster.endpoint import EndPoint
from broker_core.cluster.errors import UnknownTopicError
from broker_core.cluster.metadata_store import BrokerRegistration
from broker_core.server.metadata_cache import MetadataCache
from broker_core.server.metadata_view import NO_CONTROLLER, leader_of, partition_of
from spate.protocol.messages.update_metadata import UpdateMetadataRequest
from spate.structs import TopicPartition
from tests.support.controller_requests import Broker, FakeController, PartitionSpec

BROKERS = [Broker(1, "h1", 9091, rack="r1"), Broker(2, "h2", 9092)]


def _cache() -> MetadataCache:
    return MetadataCache(cluster_id="cluster-x", listener_name="PLAINTEXT")


def _decoded(body) -> UpdateMetadataRequest:
    """Through the wire format, as the handler receives it."""
    return UpdateMetadataRequest.decode(body.encode(7), 7)


def test_live_brokers_and_the_controller_come_from_the_latest_update() -> None:
    cache, controller = _cache(), FakeController(controller_id=2)
    cache.update_metadata(_decoded(controller.update_metadata(BROKERS)))
    assert cache.alive_brokers() == [BrokerRegistration(1, "h1", 9091, "r1"), BrokerRegistration(2, "h2", 9092)]
    assert cache.controller_id() == 2
    cache.update_metadata(_decoded(controller.update_metadata(BROKERS[1:], controller_id=-1)))
    assert [b.broker_id for b in cache.alive_brokers()] == [2]
    assert cache.alive_broker(1) is None
    assert cache.controller_id() == NO_CONTROLLER


def test_a_broker_is_reached_through_this_listener_or_else_plaintext() -> None:
    cache = _cache()
    cache.update_metadata(_decoded(FakeController().update_metadata([Broker(3, "h3", 1, listener="INTERNAL")])))
    assert cache.alive_brokers() == [BrokerRegistration(3, "h3", 1, endpoints=(EndPoint("INTERNAL", "h3", 1),))]
    body = FakeController().update_metadata([Broker(3, "h3", 1, listener="INTERNAL")])
    body.live_brokers[0].endpoints[0].security_protocol = 1  # SSL only
    cache.update_metadata(_decoded(body))
    assert cache.alive_brokers() == []


TWO_LISTENERS = [
    Broker(1, "client1", 9091, listener="CLIENT", more_listeners=(("REPLICATION", "repl1", 19091),)),
    Broker(2, "client2", 9092, listener="CLIENT", more_listeners=(("REPLICATION", "repl2", 19092),)),
    Broker(3, "repl3", 19093, listener="REPLICATION"),  # no client listener
]


def test_every_endpoint_of_every_broker_is_kept_and_the_cache_reaches_brokers_on_its_listener() -> None:
    cache = MetadataCache(cluster_id="cluster-x", listener_name="REPLICATION")
    cache.update_metadata(_decoded(FakeController().update_metadata(TWO_LISTENERS)))
    assert [(b.broker_id, b.host, b.port) for b in cache.alive_brokers()] == [
        (1, "repl1", 19091), (2, "repl2", 19092), (3, "repl3", 19093),
    ]
    assert cache.alive_broker(1).endpoints == (EndPoint("CLIENT", "client1", 9091),
                                               EndPoint("REPLICATION", "repl1", 19091))
    assert cache.inter_broker_endpoint(2) == EndPoint("REPLICATION", "repl2", 19092)
    assert cache.inter_broker_endpoint(4) is None


def test_a_listener_view_names_brokers_by_that_listener_and_leaves_out_brokers_without_it() -> None:
    cache, controller = MetadataCache(cluster_id="cluster-x", listener_name="REPLICATION"), FakeController()
    cache.update_metadata(_decoded(controller.update_metadata(TWO_LISTENERS, [
        PartitionSpec("orders", 0, 2, replicas=(2, 3)), PartitionSpec("orders", 1, 3, replicas=(3, 2)),
    ])))
    clients = cache.for_listener("CLIENT")
    assert [(b.broker_id, b.host, b.port) for b in clients.alive_brokers()] == [
        (1, "client1", 9091), (2, "client2", 9092),
    ]
    assert leader_of(clients, "orders", 0) == BrokerRegistration(2, "client2", 9092, endpoints=(
        EndPoint("CLIENT", "client2", 9092), EndPoint("REPLICATION", "repl2", 19092),
    ))
    assert leader_of(clients, "orders", 1) is None  # broker 3 has no client listener
    assert clients.alive_broker(3) is None and clients.is_alive(3) and not clients.is_alive(4)
    assert leader_of(cache, "orders", 1).port == 19093
    assert (clients.cluster_id(), clients.topic_names(), clients.partition_count("orders")) == (
        "cluster-x", ["orders"], 2,
    )
    assert clients.get_topic("orders") == cache.get_topic("orders")


def test_partition_states_merge_into_what_is_cached() -> None:
    cache, controller = _cache(), FakeController()
    cache.update_metadata(_decoded(controller.update_metadata(BROKERS, [
        PartitionSpec("orders", 0, 1, replicas=(1, 2)), PartitionSpec("orders", 1, 2, replicas=(2, 1)),
    ])))
    # A later update carrying one partition changes only that one.
    cache.update_metadata(_decoded(controller.update_metadata(BROKERS, [
        PartitionSpec("orders", 1, 1, leader_epoch=3, replicas=(2, 1), isr=(1,), zk_version=4),
    ])))
    topic = cache.get_topic("orders")
    assert topic.topic_id == controller.topic_ids["orders"]
    assert topic.partitions[0].leader == 1
    state = topic.partitions[1]
    assert (state.leader, state.leader_epoch, state.isr) == (1, 3, (1,))
    assert (state.replicas, state.partition_epoch) == ((2, 1), 4)
    assert leader_of(cache, "orders", 1) == BrokerRegistration(1, "h1", 9091, "r1")
    # An update with live brokers only keeps every partition.
    cache.update_metadata(_decoded(controller.update_metadata(BROKERS)))
    assert cache.partition_count("orders") == 2


def test_leader_during_delete_removes_partitions_and_then_the_topic() -> None:
    cache, controller = _cache(), FakeController()
    specs = [PartitionSpec("gone", p, 1) for p in range(2)] + [PartitionSpec("kept", 0, 1)]
    cache.update_metadata(_decoded(controller.update_metadata(BROKERS, specs)))
    deleted = cache.update_metadata(_decoded(controller.update_metadata(BROKERS, controller.deleting("gone", [0]))))
    assert deleted == [TopicPartition("gone", 0)]
    assert cache.partition_count("gone") == 1
    cache.update_metadata(_decoded(controller.update_metadata(BROKERS, controller.deleting("gone", [1]))))
    assert cache.topic_names() == ["kept"]
    with pytest.raises(UnknownTopicError):
        cache.get_topic("gone")
    assert partition_of(cache, "gone", 1) is None


def test_a_leader_that_is_not_alive_is_no_leader() -> None:
    cache = _cache()
    cache.update_metadata(_decoded(FakeController().update_metadata(BROKERS, [PartitionSpec("t", 0, 7)])))
    assert leader_of(cache, "t", 0) is None
    assert partition_of(cache, "t", 0).has_leader


def test_a_zero_topic_id_forgets_the_topic_id() -> None:
    cache, controller = _cache(), FakeController()
    cache.update_metadata(_decoded(controller.update_metadata(BROKERS, [PartitionSpec("t", 0, 1)])))
    controller.topic_ids["t"] = uuid.UUID(int=0)
    cache.update_metadata(_decoded(controller.update_metadata(BROKERS, [PartitionSpec("t", 0, 1)])))
    assert cache.get_topic("t").topic_id == uuid.UUID(int=0)


def test_waiters_wake_on_the_update_that_satisfies_them_or_time_out() -> None:
    async def scenario() -> tuple[bool, bool]:
        cache, controller = _cache(), FakeController()
        waiting = asyncio.ensure_future(cache.wait_until(lambda: cache.partition_count("t") == 1, 5))
        await asyncio.sleep(0.01)
        cache.update_metadata(_decoded(controller.update_metadata(BROKERS)))
        await asyncio.sleep(0.01)
        assert not waiting.done()
        cache.update_metadata(_decoded(controller.update_metadata(BROKERS, [PartitionSpec("t", 0, 1)])))
        woken = await asyncio.wait_for(waiting, 1)
        timed_out = await cache.wait_until(lambda: cache.partition_count("u") is not None, 0.05)
        return woken, timed_out

    assert asyncio.run(scenario()) == (True, False)
