"""The log cleaner, as Kafka's ``kafka.log:type=LogCleanerManager`` and ``type=LogCleaner`` MBeans show it.

``kafka_log_logcleanermanager_max_dirty_percent`` is the dirtiest compacted
log's dirty share (how far the cleaner is behind), with the dirty bytes of
each compacted partition beside it (``..._dirty_bytes{topic,partition}``,
the cleaner's lag per partition); ``..._uncleanable_partitions_count`` counts
logs a cleaning failed on. The ``kafka_log_logcleaner_*`` counters sum what
the passes read, wrote and kept. Read at scrape time on the event loop, which
owns the logs.
"""

from __future__ import annotations

from typing import Iterable

from broker_core.storage.cleaner.log_cleaner import LogCleaner


class CleanerCollector:
    def __init__(self, cleaner: LogCleaner) -> None:
        self._cleaner = cleaner

    def collect(self) -> Iterable[object]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        ranges = self._cleaner.dirty_ranges()
        yield GaugeMetricFamily("kafka_log_logcleanermanager_max_dirty_percent",
                                "Dirty share of the dirtiest compacted log, in percent.",
                                value=100 * max((r.dirty_ratio for r in ranges.values()), default=0.0))
        dirty = GaugeMetricFamily("kafka_log_logcleanermanager_dirty_bytes",
                                  "Bytes of a compacted log not cleaned yet.", labels=["topic", "partition"])
        for tp, cleanable in sorted(ranges.items()):
            dirty.add_metric([tp.topic, str(tp.partition)], cleanable.dirty_bytes)
        yield dirty
        yield GaugeMetricFamily("kafka_log_logcleanermanager_uncleanable_partitions_count",
                                "Logs a cleaning failed on, skipped until the broker restarts.",
                                value=len(self._cleaner.uncleanable))
        stats = self._cleaner.stats
        yield CounterMetricFamily("kafka_log_logcleaner_passes", "Cleaning passes applied.", value=self._cleaner.passes)
        for name, value, doc in (("bytes_read", stats.bytes_read, "Bytes of dirty log the cleaner read."),
                                 ("bytes_written", stats.bytes_written, "Bytes of cleaned segments written."),
                                 ("records_read", stats.records_read, "Records the cleaner read."),
                                 ("records_kept", stats.records_kept, "Records the cleaner kept.")):
            yield CounterMetricFamily(f"kafka_log_logcleaner_{name}", doc, value=value)
