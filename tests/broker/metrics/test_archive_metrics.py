"""``spate_log_archive_lag_records``: what retention holds back for the archive, per led archiving partition."""

from __future__ import annotations

from types import SimpleNamespace

from broker_core.metrics.archive_metrics import ArchiveCollector, archive_lag
from broker_core.storage.files import TopicPartition
from tests.broker.metrics.fakes import FakePartition, FakeReplicas
from tests.broker.metrics.samples import registry_of, value


def archiving(partition: FakePartition, *, path: str, target: int, stable: int) -> FakePartition:
    partition.log = SimpleNamespace(
        config=SimpleNamespace(archiving=bool(path)),
        local_log=SimpleNamespace(retention_target=lambda now, high_watermark: target),
    )
    partition.last_stable_offset = stable
    return partition


def replicas_with(archived: dict[TopicPartition, int], *partitions: FakePartition) -> FakeReplicas:
    replicas = FakeReplicas(*partitions)
    replicas.log_manager = SimpleNamespace(archived_offset=archived.get)
    return replicas


def test_the_lag_counts_offsets_below_the_target_that_are_neither_archived_nor_deleted():
    assert archive_lag(100, None, 0) == 100
    assert archive_lag(100, 60, 0) == 40
    assert archive_lag(100, 60, 80) == 20
    assert archive_lag(100, 120, 0) == 0


def test_led_archiving_partitions_export_their_lag_and_archived_offset():
    orders0 = archiving(FakePartition("orders", 0, log_start_offset=10), path="/a", target=100, stable=90)
    orders1 = archiving(FakePartition("orders", 1), path="/a", target=50, stable=90)
    followed = archiving(FakePartition("orders", 2, is_leader=False), path="/a", target=50, stable=90)
    plain = archiving(FakePartition("plain", 0), path="", target=50, stable=90)
    replicas = replicas_with({TopicPartition("orders", 1): 20}, orders0, orders1, followed, plain)

    registry = registry_of(ArchiveCollector(replicas, clock=lambda: 0))

    assert value(registry, "spate_log_archive_lag_records", topic="orders", partition="0") == 80  # capped at the LSO
    assert value(registry, "spate_log_archive_lag_records", topic="orders", partition="1") == 30
    assert value(registry, "spate_log_archived_offset", topic="orders", partition="0") == -1
    assert value(registry, "spate_log_archived_offset", topic="orders", partition="1") == 20
    assert value(registry, "spate_log_archive_lag_records", topic="orders", partition="2") is None
    assert value(registry, "spate_log_archive_lag_records", topic="plain", partition="0") is None
