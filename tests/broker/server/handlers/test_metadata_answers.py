"""Metadata answers from the answer cache: a repeated request is served from it, and every change is seen at once.

Each step asks twice, through the broker's shared cache and through an
empty one: the two answers must be the same bytes, so nothing cached is
ever stale. Both metadata views are covered: the embedded broker's store
and a cluster broker's cache fed by UpdateMetadata.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable

import pytest

from broker_core.cluster.local_store import LocalMetadataStore
from broker_core.cluster.metadata_store import BrokerRegistration, PartitionState
from broker_core.security.authorizer.acl import AclOperation as Op
from broker_core.security.authorizer.acl import ResourceType
from broker_core.server.handlers import metadata
from broker_core.server.metadata_answer_cache import MetadataAnswerCache
from broker_core.server.metadata_cache import MetadataCache
from broker_core.server.metadata_view import StoreMetadataView
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.metadata import MetadataRequest, MetadataResponse
from tests.support.controller_requests import Broker, FakeController, PartitionSpec

Q = MetadataRequest
LISTENER = "PLAINTEXT"


@dataclass
class AllowOnly:
    """An authorizer allowing exactly ``allowed`` (operation, resource type, name) triples."""

    allowed: set[tuple[Op, ResourceType, str]] = field(default_factory=set)

    def authorize(self, principal: str, host: str, operation: Op, resource_type: ResourceType, name: str) -> bool:
        return (operation, resource_type, name) in self.allowed


def context(view: Any, **more: Any) -> SimpleNamespace:
    return SimpleNamespace(metadata=view, admin=None, listener_name=LISTENER, metadata_answers=MetadataAnswerCache(),
                           **more)


def encoded_answer(ctx: Any, version: int, topics: list[str] | None, operations: bool = False) -> bytes:
    wanted = None if topics is None else [Q.MetadataRequestTopic(name=t) for t in topics]
    body = Q(topics=wanted, allow_auto_topic_creation=False, include_topic_authorized_operations=operations)
    if version == 0 and wanted is None:
        body.topics = []
    request = Request(header=None, body=body, api_key=ApiKey.METADATA, api_version=version, size=0)
    return metadata.handle(ctx, request).encode(version)


def ask(ctx: Any, version: int = 12, topics: list[str] | None = ("orders",), operations: bool = False) -> Any:
    """The answer through ``ctx``'s cache, checked against the answer an empty cache gives."""
    topics = None if topics is None else list(topics)
    cached = encoded_answer(ctx, version, topics, operations)
    fresh = encoded_answer(SimpleNamespace(**{**vars(ctx), "metadata_answers": MetadataAnswerCache()}), version,
                           topics, operations)
    assert cached == fresh, "the cached answer differs from a freshly built one"
    return MetadataResponse.decode(cached, version)


def partitions(answer: Any, topic: str = "orders") -> dict[int, tuple[int, int, list[int], list[int]]]:
    (described,) = [t for t in answer.topics if t.name == topic]
    assert described.error_code == ErrorCode.NONE
    return {p.partition_index: (p.error_code, p.leader_id, p.replica_nodes, p.isr_nodes)
            for p in described.partitions}


# --- the embedded broker: its metadata store -------------------------------------------------


@pytest.fixture
def store(tmp_path):
    with LocalMetadataStore(tmp_path / "metadata.json") as opened:
        opened.register_broker(BrokerRegistration(0, "b0", 9092))
        opened.register_broker(BrokerRegistration(1, "b1", 9093))
        opened.create_topic("orders", {0: [0, 1], 1: [1, 0]})
        yield opened


@pytest.fixture
def embedded(store):
    return context(StoreMetadataView(store, node_id=0).for_listener(LISTENER))


def test_a_repeated_request_is_answered_from_the_cache(embedded) -> None:
    first = ask(embedded)
    hits = embedded.metadata_answers.stats.hits
    assert ask(embedded) == first
    assert embedded.metadata_answers.stats.hits == hits + 1


def change_leader(store: LocalMetadataStore, partition: int, leader: int, isr: tuple[int, ...]) -> None:
    current = store.get_partition_state("orders", partition)
    new = PartitionState(leader, current.leader_epoch + 1, isr, current.replicas, current.controller_epoch)
    store.update_partition_state("orders", partition, new, expected_version=current.version)


def test_embedded_a_leader_change_is_seen_at_once(store, embedded) -> None:
    assert partitions(ask(embedded))[0][1] == 0
    change_leader(store, 0, leader=1, isr=(1, 0))
    assert partitions(ask(embedded))[0] == (ErrorCode.NONE, 1, [0, 1], [1, 0])


def test_embedded_an_isr_change_is_seen_at_once(store, embedded) -> None:
    ask(embedded)
    change_leader(store, 1, leader=1, isr=(1,))
    assert partitions(ask(embedded))[1] == (ErrorCode.NONE, 1, [1, 0], [1])


def test_embedded_new_partitions_are_seen_at_once(store, embedded) -> None:
    ask(embedded)
    store.add_partitions("orders", {2: [0, 1]})
    assert sorted(partitions(ask(embedded))) == [0, 1, 2]


def test_embedded_a_deleted_topic_is_unknown_and_its_successor_has_a_new_id(store, embedded) -> None:
    old_id = ask(embedded).topics[0].topic_id
    store.delete_topic("orders")
    assert ask(embedded).topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    store.create_topic("orders", {0: [1, 0]})
    recreated = ask(embedded).topics[0]
    assert recreated.topic_id != old_id and [p.leader_id for p in recreated.partitions] == [1]


def test_embedded_a_broker_gone_leaves_its_partitions_without_a_leader(store, embedded) -> None:
    ask(embedded)
    store.unregister_broker(1)
    assert partitions(ask(embedded))[1][:2] == (ErrorCode.LEADER_NOT_AVAILABLE, -1)
    store.register_broker(BrokerRegistration(1, "b1", 9093))
    assert partitions(ask(embedded))[1][:2] == (ErrorCode.NONE, 1)


def test_embedded_a_config_change_leaves_the_answer_right(store, embedded) -> None:
    before = ask(embedded)
    store.set_topic_configs("orders", {"retention.ms": "1000"})
    assert ask(embedded) == before


@pytest.mark.parametrize("version", [0, 1, 5, 6, 7, 8, 9, 10, 12])
def test_each_version_gets_its_own_entry(embedded, version: int) -> None:
    for asked in (12, version, 12, version):
        assert partitions(ask(embedded, asked))[0][1] == 0


def test_all_topics_are_answered_from_the_cache_and_follow_a_new_topic(store, embedded) -> None:
    assert [t.name for t in ask(embedded, topics=None).topics] == ["orders"]
    store.create_topic("payments", {0: [0]})
    assert [t.name for t in ask(embedded, topics=None).topics] == ["orders", "payments"]
    assert [t.name for t in ask(embedded, 0, topics=None).topics] == ["orders", "payments"]


def test_authorized_operations_follow_the_acls(store) -> None:
    acls = AllowOnly({(Op.DESCRIBE, ResourceType.TOPIC, "orders")})
    ctx = context(StoreMetadataView(store, node_id=0).for_listener(LISTENER), authorizer=acls)
    assert ask(ctx, operations=True).topics[0].topic_authorized_operations == 1 << Op.DESCRIBE
    acls.allowed.add((Op.READ, ResourceType.TOPIC, "orders"))
    assert ask(ctx, operations=True).topics[0].topic_authorized_operations == (1 << Op.DESCRIBE) | (1 << Op.READ)
    acls.allowed.clear()
    assert ask(ctx).topics[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED


# --- a cluster broker: its cache fed by UpdateMetadata -----------------------------------------

BROKERS = [Broker(1, "b1", 9091), Broker(2, "b2", 9092)]


@pytest.fixture
def controller() -> FakeController:
    return FakeController(controller_id=1)


@pytest.fixture
def cache(controller) -> MetadataCache:
    fed = MetadataCache(cluster_id="c", listener_name=LISTENER)
    fed.update_metadata(controller.update_metadata(BROKERS, [
        PartitionSpec("orders", 0, 1, replicas=(1, 2)), PartitionSpec("orders", 1, 2, replicas=(2, 1)),
        PartitionSpec("payments", 0, 2, replicas=(2,)),
    ]))
    return fed


@pytest.fixture
def cluster(cache) -> SimpleNamespace:
    return context(cache.for_listener(LISTENER))


def updated(cache: MetadataCache, controller: FakeController, *specs: PartitionSpec,
            brokers: list[Broker] = BROKERS) -> None:
    cache.update_metadata(controller.update_metadata(brokers, list(specs)))


CLUSTER_CHANGES: dict[str, tuple[Callable[[MetadataCache, FakeController], None], Callable[[Any], bool]]] = {
    "leader change": (
        lambda cache, ctl: updated(cache, ctl, PartitionSpec("orders", 0, 2, 1, replicas=(1, 2), isr=(2,))),
        lambda answer: partitions(answer)[0] == (ErrorCode.NONE, 2, [1, 2], [2]),
    ),
    "isr change": (
        lambda cache, ctl: updated(cache, ctl, PartitionSpec("orders", 1, 2, 0, replicas=(2, 1), isr=(2,))),
        lambda answer: partitions(answer)[1] == (ErrorCode.NONE, 2, [2, 1], [2]),
    ),
    "new partition": (
        lambda cache, ctl: updated(cache, ctl, PartitionSpec("orders", 2, 1, replicas=(1, 2))),
        lambda answer: sorted(partitions(answer)) == [0, 1, 2],
    ),
    "topic deleted": (
        lambda cache, ctl: updated(cache, ctl, *ctl.deleting("orders", [0, 1])),
        lambda answer: answer.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ),
    "broker gone": (
        lambda cache, ctl: updated(cache, ctl, brokers=BROKERS[:1]),
        lambda answer: partitions(answer)[1][:2] == (ErrorCode.LEADER_NOT_AVAILABLE, -1),
    ),
    "an update of another topic": (
        lambda cache, ctl: updated(cache, ctl, PartitionSpec("payments", 0, 2, 5, replicas=(2,))),
        lambda answer: partitions(answer)[0][1] == 1,
    ),
}


@pytest.mark.parametrize("change", sorted(CLUSTER_CHANGES))
def test_cluster_every_update_is_seen_at_once(cache, controller, cluster, change: str) -> None:
    apply, holds = CLUSTER_CHANGES[change]
    ask(cluster)
    ask(cluster)
    assert cluster.metadata_answers.stats.hits >= 1
    apply(cache, controller)
    assert holds(ask(cluster))


def test_cluster_an_update_of_another_topic_keeps_this_topics_entry(cache, controller, cluster) -> None:
    ask(cluster)
    updated(cache, controller, PartitionSpec("payments", 0, 2, 5, replicas=(2,)))
    hits = cluster.metadata_answers.stats.hits
    ask(cluster)
    assert cluster.metadata_answers.stats.hits == hits + 1


def test_cluster_a_recreated_topic_gets_its_new_id(cache, controller, cluster) -> None:
    old_id = ask(cluster).topics[0].topic_id
    updated(cache, controller, *controller.deleting("orders", [0, 1]))
    controller.topic_ids.pop("orders")
    updated(cache, controller, PartitionSpec("orders", 0, 1, replicas=(1,)))
    recreated = ask(cluster).topics[0]
    assert recreated.topic_id != old_id and recreated.topic_id == controller.topic_ids["orders"]
