"""Partition counts, replication health and per-partition log gauges, read from the replica manager."""

from __future__ import annotations

from broker_core.metrics.replica_metrics import ReplicaCollector
from tests.broker.metrics.fakes import FakePartition, FakeReplicas
from tests.broker.metrics.samples import registry_of, value

RM = "kafka_server_replicamanager_"


def collect(replicas: FakeReplicas, isr_changes: tuple[int, int] = (0, 0)):
    return registry_of(ReplicaCollector(replicas, lambda: isr_changes))


def test_partitions_and_leaders_are_counted() -> None:
    registry = collect(FakeReplicas(FakePartition("a", 0), FakePartition("a", 1, is_leader=False)))
    assert value(registry, RM + "partitioncount") == 2
    assert value(registry, RM + "leadercount") == 1


def test_a_led_partition_missing_a_replica_from_its_isr_is_under_replicated() -> None:
    registry = collect(FakeReplicas(
        FakePartition("a", 0, replicas=(1, 2, 3), isr=(1, 2), min_insync_replicas=2),
        FakePartition("a", 1, replicas=(1, 2, 3), isr=(1,), min_insync_replicas=2),
        FakePartition("a", 2, replicas=(1, 2, 3), isr=(1, 2, 3)),
        # Followers report nothing: their leader does.
        FakePartition("a", 3, is_leader=False, replicas=(1, 2, 3), isr=(2,), min_insync_replicas=2),
    ))
    assert value(registry, RM + "underreplicatedpartitions") == 2
    assert value(registry, RM + "underminisrpartitioncount") == 1


def test_isr_changes_and_offline_replicas_are_reported() -> None:
    registry = collect(FakeReplicas(offline=3), isr_changes=(4, 2))
    assert value(registry, RM + "isrshrinks_total") == 4
    assert value(registry, RM + "isrexpands_total") == 2
    assert value(registry, RM + "offlinereplicacount") == 3


def test_every_hosted_log_reports_its_size_segments_and_offsets() -> None:
    registry = collect(FakeReplicas(
        FakePartition("a", 0, size=1234, segments=3, log_start_offset=5, log_end_offset=42),
        FakePartition("b", 1, is_leader=False, size=10),
    ))
    assert value(registry, "kafka_log_log_size", topic="a", partition="0") == 1234
    assert value(registry, "kafka_log_log_numlogsegments", topic="a", partition="0") == 3
    assert value(registry, "kafka_log_log_logstartoffset", topic="a", partition="0") == 5
    assert value(registry, "kafka_log_log_logendoffset", topic="a", partition="0") == 42
    assert value(registry, "kafka_log_log_size", topic="b", partition="1") == 10
