"""Groups by state and consumer lag, computed on the coordinator."""

from __future__ import annotations

from types import SimpleNamespace

from broker_core.coordinator.group.group_metadata import GroupState
from broker_core.metrics.group_metrics import GroupCollector
from spate.structs import TopicPartition
from tests.broker.metrics.fakes import FakePartition, FakeReplicas
from tests.broker.metrics.samples import registry_of, value

MANAGER = "kafka_coordinator_group_groupmetadatamanager_"


def group(group_id: str, state: GroupState, **committed: int) -> SimpleNamespace:
    """``committed``: ``topic_partition=offset`` keyword pairs, e.g. ``orders_0=5``."""
    offsets = {}
    for key, offset in committed.items():
        topic, _, index = key.rpartition("_")
        offsets[TopicPartition(topic, int(index))] = SimpleNamespace(offset=offset)
    return SimpleNamespace(group_id=group_id, state=state, offsets=offsets)


def manager(*groups: SimpleNamespace, active: bool = True) -> SimpleNamespace:
    return SimpleNamespace(is_active=active, groups=lambda: list(groups))


def test_groups_are_counted_by_state_with_every_state_present() -> None:
    registry = registry_of(GroupCollector(
        manager(group("g1", GroupState.STABLE), group("g2", GroupState.STABLE), group("g3", GroupState.EMPTY)),
        FakeReplicas(),
    ))
    assert value(registry, MANAGER + "numgroups", state="Stable") == 2
    assert value(registry, MANAGER + "numgroups", state="Empty") == 1
    assert value(registry, MANAGER + "numgroups", state="PreparingRebalance") == 0


def test_lag_is_the_high_watermark_minus_the_committed_offset() -> None:
    replicas = FakeReplicas(FakePartition("orders", 0, high_watermark=10),
                            FakePartition("orders", 1, is_leader=False, high_watermark=7))
    registry = registry_of(GroupCollector(manager(group("g", GroupState.STABLE, orders_0=4, orders_1=7)), replicas))
    assert value(registry, "kafka_consumergroup_lag", group="g", topic="orders", partition="0") == 6
    assert value(registry, "kafka_consumergroup_lag", group="g", topic="orders", partition="1") == 0
    assert value(registry, "kafka_consumergroup_current_offset", group="g", topic="orders", partition="0") == 4
    assert value(registry, MANAGER + "numoffsets") == 2


def test_lag_is_never_negative() -> None:
    replicas = FakeReplicas(FakePartition("t", 0, high_watermark=3))
    registry = registry_of(GroupCollector(manager(group("g", GroupState.EMPTY, t_0=9)), replicas))
    assert value(registry, "kafka_consumergroup_lag", group="g", topic="t", partition="0") == 0


def test_a_partition_this_broker_does_not_host_reports_its_offset_but_no_lag() -> None:
    registry = registry_of(GroupCollector(manager(group("g", GroupState.STABLE, elsewhere_0=4)), FakeReplicas()))
    assert value(registry, "kafka_consumergroup_current_offset", group="g", topic="elsewhere", partition="0") == 4
    assert value(registry, "kafka_consumergroup_lag", group="g", topic="elsewhere", partition="0") is None


def test_a_coordinator_not_serving_yet_reports_no_groups() -> None:
    registry = registry_of(GroupCollector(manager(group("g", GroupState.STABLE), active=False), FakeReplicas()))
    assert value(registry, MANAGER + "numgroups", state="Stable") == 0
