"""The partitions this broker hosts and their logs (Kafka's ``ReplicaManager`` and ``Log`` MBeans).

Read from the replica manager at scrape time:

- ``kafka_server_replicamanager_partitioncount`` / ``leadercount``: hosted / led partitions;
- ``kafka_server_replicamanager_underreplicatedpartitions``: led partitions whose ISR is
  smaller than their replica set;
- ``kafka_server_replicamanager_underminisrpartitioncount``: led partitions whose ISR is
  smaller than ``min.insync.replicas`` (acks=all produces to them fail);
- ``kafka_server_replicamanager_offlinereplicacount``: partitions lost with a failed log dir;
- ``kafka_server_replicamanager_isrshrinks_total`` / ``isrexpands_total``: ISR changes this
  broker applied as leader (0 on the embedded broker, whose ISR never changes);
- ``kafka_log_log_size``, ``numlogsegments``, ``logstartoffset``, ``logendoffset``
  (labels ``topic``, ``partition``): every hosted log, led or followed.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

REPLICA_MANAGER = "kafka_server_replicamanager_"


class ReplicaCollector:
    def __init__(self, replicas: Any, isr_changes: Callable[[], tuple[int, int]]) -> None:
        """``replicas``: the broker's ReplicaManager; ``isr_changes()``: (shrinks, expands) so far."""
        self._replicas = replicas
        self._isr_changes = isr_changes

    def collect(self) -> Iterable[object]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        partitions = list(self._replicas)
        led = [p for p in partitions if p.is_leader]
        gauges = (
            ("partitioncount", "Partitions hosted here, led or followed.", len(partitions)),
            ("leadercount", "Partitions led here.", len(led)),
            ("underreplicatedpartitions", "Led partitions whose ISR is smaller than their replica set.",
             sum(1 for p in led if len(p.isr) < len(p.replicas))),
            ("underminisrpartitioncount", "Led partitions whose ISR is smaller than min.insync.replicas.",
             sum(1 for p in led if len(p.isr) < p.min_insync_replicas)),
            ("offlinereplicacount", "Partitions offline here because their log dir failed.",
             self._replicas.offline_count),
        )
        for name, doc, value in gauges:
            yield GaugeMetricFamily(REPLICA_MANAGER + name, doc, value=value)
        shrinks, expands = self._isr_changes()
        yield CounterMetricFamily(REPLICA_MANAGER + "isrshrinks", "ISR changes that removed replicas.", value=shrinks)
        yield CounterMetricFamily(REPLICA_MANAGER + "isrexpands", "ISR changes that added replicas.", value=expands)
        yield from _log_families(partitions)


def _log_families(partitions: list[Any]) -> Iterable[object]:
    from prometheus_client.core import GaugeMetricFamily

    labels = ["topic", "partition"]
    size = GaugeMetricFamily("kafka_log_log_size", "Bytes of a partition's log segments.", labels=labels)
    segments = GaugeMetricFamily("kafka_log_log_numlogsegments", "Segments of a partition's log.", labels=labels)
    start = GaugeMetricFamily("kafka_log_log_logstartoffset", "A partition's log start offset.", labels=labels)
    end = GaugeMetricFamily("kafka_log_log_logendoffset", "A partition's log end offset.", labels=labels)
    for partition in sorted(partitions, key=lambda p: (p.topic, p.index)):
        key = [partition.topic, str(partition.index)]
        local = partition.log.local_log
        size.add_metric(key, local.size_in_bytes)
        segments.add_metric(key, local.number_of_segments)
        start.add_metric(key, partition.log_start_offset)
        end.add_metric(key, partition.log_end_offset)
    return (size, segments, start, end)
