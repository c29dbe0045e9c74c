"""Streaming reads: ``spark.readStream.format("spate")``.

Offsets are Spark-Kafka JSON (``{"topic": {"0": 23}}``): for each partition
the next offset to read. Spark runs the driver side of this reader in one
long-lived process per query, so the reader keeps its admin client, the time
of the last micro-batch (for ``maxTriggerDelay``) and the Trigger.AvailableNow
target between calls. Executors get a fresh copy that only reads ranges.

Every micro-batch:

1. ``latestOffset(start, limit)`` resolves the partitions again (new
   partitions of subscribed topics and new topics matching
   ``subscribePattern`` join, starting at their log start), checks the start
   offsets against the log start (``failOnDataLoss``), asks for the end
   offsets, caps them at the AvailableNow target if there is one, and applies
   the read limits;
2. ``partitions(start, end)`` plans the ranges (checking for data loss
   again: a restarted query replans without step 1);
3. ``commit(end)`` commits the end offsets to ``groupId`` if set.

Spark calls ``commit(end)`` for a batch only when it plans the next one,
which on a quiet topic may not happen for a long time. The ``start`` given
to ``latestOffset`` is the end of the last batch Spark committed (or the
initial offsets), so it is committed to the group as well (when it
changed): lag tools then see the query caught up once it is.

Read limits. Spark passes :class:`ReadAllAvailable` when the trigger asks
for everything (``Trigger.Once``); then the options' limits are ignored.
Otherwise (the default limit this reader announces, also under
``Trigger.AvailableNow``) every configured limit applies together:
``maxOffsetsPerTrigger``, ``maxBytesPerTrigger``, and
``minOffsetsPerTrigger`` with ``maxTriggerDelay`` (skipped under
AvailableNow, where waiting for more data would never end).
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Iterator

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)

from spark_ext.data_loss import DataLossPolicy
from spark_ext.group_commit import GroupOffsetCommitter
from spark_ext.offset_ranges import OffsetRange, cap_bytes, cap_offsets
from spark_ext.offset_reader import OffsetReader
from spark_ext.offsets import PartitionOffsets, offsets_from_dict, offsets_to_dict
from spark_ext.options import SourceOptions
from spark_ext.partition_reader import ReadSettings
from spark_ext.query_metrics import report
from spark_ext.reader import input_partitions, offset_reader_for, read_partition
from spate.client import TopicPartition

log = logging.getLogger("spark_ext.stream_reader")

NEW_PARTITION_LOSS = "were deleted before the query found the new partition"


class SpateStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(
        self,
        options: SourceOptions,
        *,
        offset_reader_factory: Callable[[SourceOptions], OffsetReader] = offset_reader_for,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # Cheap and connection-free: Spark also builds this object just to ship read() to executors.
        self.options = options
        self.settings = ReadSettings.from_options(options)
        self._offset_reader_factory = offset_reader_factory
        self._clock = clock
        self._offsets: OffsetReader | None = None
        self._available_now_target: PartitionOffsets | None = None
        self._last_trigger: float | None = None
        self._latest_seen: PartitionOffsets | None = None
        self._policy = DataLossPolicy(options.fail_on_data_loss)
        self._committer = (
            None if options.group_id is None
            else GroupOffsetCommitter(options.group_id, lambda: self.offsets.admin)
        )
        self._group_committed: PartitionOffsets | None = None
        self._gone: set[TopicPartition] = set()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_offsets"] = None
        state["_committer"] = None
        return state

    @property
    def offsets(self) -> OffsetReader:
        if self._offsets is None:
            self._offsets = self._offset_reader_factory(self.options)
        return self._offsets

    # --- offsets ----------------------------------------------------------------------------------

    def initialOffset(self) -> dict:
        tps = self.offsets.partitions()
        return offsets_to_dict(self.offsets.resolve(self.options.starting, tps))

    def getDefaultReadLimit(self) -> ReadLimit:
        # Spark takes one limit; the others are applied from the options alongside it.
        o = self.options
        if o.max_offsets_per_trigger is not None:
            return ReadMaxRows(o.max_offsets_per_trigger)
        if o.max_bytes_per_trigger is not None:
            return ReadMaxBytes(o.max_bytes_per_trigger)
        if o.min_offsets_per_trigger is not None:
            return ReadMinRows(o.min_offsets_per_trigger)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._available_now_target = self.offsets.latest(self.offsets.partitions())
        log.info("Trigger.AvailableNow reads up to %s", offsets_to_dict(self._available_now_target))

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        now = self._clock()
        if self._last_trigger is None:
            self._last_trigger = now
        processed = offsets_from_dict(start, what="start offsets")
        self._commit_to_group(processed)
        starts = self._current_starts(processed)
        latest = self.offsets.latest([tp for tp in starts if tp not in self._gone])
        self._latest_seen = dict(latest)
        for tp in starts:
            if tp not in latest:
                latest[tp] = starts[tp]  # no answer for it now: stay where it is
            elif latest[tp] < starts[tp]:
                log.warning("%s ends at offset %d, before the query's position %d; waiting for it to catch up",
                            tp, latest[tp], starts[tp])
                latest[tp] = starts[tp]
        if self._available_now_target is not None:
            target = self._available_now_target
            latest = {tp: max(starts[tp], min(end, target.get(tp, starts[tp]))) for tp, end in latest.items()}
        ends = self._apply_limits(starts, latest, limit, now)
        if ends is None:
            return start
        if any(ends[tp] > starts[tp] for tp in ends):
            self._last_trigger = now
        return offsets_to_dict(ends)

    def reportLatestOffset(self) -> dict | None:
        return None if self._latest_seen is None else offsets_to_dict(self._latest_seen)

    def _current_starts(self, starts: PartitionOffsets) -> PartitionOffsets:
        """Start offsets for this trigger: known partitions checked for data loss, new ones at their log start.

        Partitions that vanished from the metadata (topic deleted, or not
        answered for now) keep their offsets unchanged, so that a partition
        which comes back is never read again from its start.
        """
        tps = self.offsets.partitions()
        gone = set(starts) - tps
        if gone and gone != self._gone:
            log.warning("partitions %s are not in the cluster metadata; not reading them while they are away",
                        ", ".join(map(str, sorted(gone))))
        self._gone = gone
        earliest = self.offsets.earliest(tps)
        current: PartitionOffsets = {tp: starts[tp] for tp in gone}
        for tp in sorted(tps):
            if tp in starts:
                log_start = earliest.get(tp, starts[tp])
                current[tp] = self._policy.resolve_start(tp, starts[tp], log_start)
            elif tp in earliest:
                log.info("new partition %s: reading it from its log start", tp)
                current[tp] = self._policy.resolve_start(tp, 0, earliest[tp], reason=NEW_PARTITION_LOSS)
        return current

    def _apply_limits(
        self, starts: PartitionOffsets, latest: PartitionOffsets, limit: ReadLimit, now: float
    ) -> PartitionOffsets | None:
        """End offsets within the limits; None to skip this trigger (too little data, delay not over)."""
        if isinstance(limit, ReadAllAvailable):
            return latest
        o = self.options
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else o.max_offsets_per_trigger
        max_bytes = limit.max_bytes if isinstance(limit, ReadMaxBytes) else o.max_bytes_per_trigger
        min_rows = limit.min_rows if isinstance(limit, ReadMinRows) else o.min_offsets_per_trigger
        if min_rows is not None and self._available_now_target is None:
            available = sum(latest[tp] - starts[tp] for tp in latest)
            waited_ms = (now - (self._last_trigger or now)) * 1000
            if available < min_rows and waited_ms < o.max_trigger_delay_ms:
                return None
        ends = dict(latest)
        if max_rows is not None:
            ends = cap_offsets(starts, ends, max_rows)
        if max_bytes is not None:
            samples = self.offsets.sample_sizes(starts, ends, max_bytes)
            ends = cap_bytes(starts, ends, samples, max_bytes)
        return ends

    # --- planning and reading ---------------------------------------------------------------------

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        starts = offsets_from_dict(start, what="start offsets")
        ends = offsets_from_dict(end, what="end offsets")
        todo = [tp for tp in sorted(ends) if ends[tp] > starts.get(tp, 0) or tp not in starts]
        if not todo:
            return []
        earliest = self.offsets.earliest(todo)
        ranges = []
        for tp in todo:
            log_start = earliest.get(tp, starts.get(tp, 0))
            if tp in starts:
                begin = self._policy.resolve_start(tp, starts[tp], log_start)
            else:
                begin = self._policy.resolve_start(tp, 0, log_start, reason=NEW_PARTITION_LOSS)
            if ends[tp] > begin:
                ranges.append(OffsetRange(tp.topic, tp.partition, begin, ends[tp]))
        return input_partitions(ranges, self.options, self.offsets)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_partition(partition, self.settings)

    def commit(self, end: dict) -> None:
        self._commit_to_group(offsets_from_dict(end, what="end offsets"))

    def _commit_to_group(self, offsets: PartitionOffsets) -> None:
        """Commit processed offsets to ``groupId`` unless they are what was committed last."""
        if self._committer is None or offsets == self._group_committed:
            return
        if self._committer.commit(offsets):
            self._group_committed = offsets
            metrics = self.options.metrics
            if metrics is not None:
                report(metrics.target(self.options.group_id), {
                    "kind": "group_commit", "group": self.options.group_id,
                    "offsets": [[tp.topic, tp.partition, offset] for tp, offset in sorted(offsets.items())],
                })

    def stop(self) -> None:
        if self._offsets is not None:
            self._offsets.close()
            self._offsets = None
