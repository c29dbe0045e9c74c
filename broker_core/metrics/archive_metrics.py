"""How far archiving topics' Delta archives lag behind retention (Spate's own, no Kafka MBean).

Read from the replica manager at scrape time, for every partition led here
whose topic sets ``spate.archive.path``:

- ``spate_log_archive_lag_records`` (labels ``topic``, ``partition``): offsets
  retention would delete but keeps because they are not archived yet (from
  the archived offset, or the log start when later, up to where time and
  size retention would move the log start, at most the last stable offset).
  It grows while the archive job is stopped; the disk fills rather than
  records being lost;
- ``spate_log_archived_offset``: the archived offset the archive job last
  reported (-1: never).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable

from broker_core.storage.files import TopicPartition


def archive_lag(target: int, archived: int | None, log_start: int) -> int:
    """Offsets below ``target`` that are neither archived nor gone."""
    return max(0, target - max(log_start, -1 if archived is None else archived))


class ArchiveCollector:
    def __init__(self, replicas: Any, clock: Callable[[], int] = lambda: int(time.time() * 1000)) -> None:
        """``replicas``: the broker's ReplicaManager (iterable over hosted partitions, with its log manager)."""
        self._replicas = replicas
        self._clock = clock

    def collect(self) -> Iterable[object]:
        from prometheus_client.core import GaugeMetricFamily

        labels = ["topic", "partition"]
        lag = GaugeMetricFamily("spate_log_archive_lag_records",
                                "Offsets of an archiving partition that retention keeps until they are archived.",
                                labels=labels)
        archived_family = GaugeMetricFamily("spate_log_archived_offset",
                                            "The offset below which an archiving partition is archived (-1: never).",
                                            labels=labels)
        now = self._clock()
        led = [p for p in self._replicas if p.is_leader and p.log.config.archiving]
        for partition in sorted(led, key=lambda p: (p.topic, p.index)):
            key = [partition.topic, str(partition.index)]
            archived = self._replicas.log_manager.archived_offset(TopicPartition(partition.topic, partition.index))
            target = min(partition.log.local_log.retention_target(now, high_watermark=partition.high_watermark),
                         partition.last_stable_offset)
            lag.add_metric(key, archive_lag(target, archived, partition.log_start_offset))
            archived_family.add_metric(key, -1 if archived is None else archived)
        return (lag, archived_family)
