"""The driver's questions to the brokers: which partitions, which offsets, how big the records are.

One :class:`OffsetReader` per query (or batch read) on the driver. It holds
an admin client, made on first use and closed by :meth:`close`; it is never
shipped to executors.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable, Mapping

from spark_ext.offset_ranges import SizeSample
from spark_ext.offset_spec import (
    Earliest,
    GlobalTimestamp,
    Latest,
    OffsetSpec,
    SpecificOffsets,
    SpecificTimestamps,
)
from spark_ext.offsets import EARLIEST_OFFSET, LATEST_OFFSET
from spark_ext.options import SourceOptionError, SourceOptions
from spate.client import EARLIEST, LATEST, Admin, Consumer, OffsetOutOfRangeError, TopicPartition

# Record-size samples read at most this many bytes per partition.
MAX_SAMPLE_BYTES = 512 * 1024
_SAMPLE_TIMEOUT_S = 10.0


class OffsetLookupError(RuntimeError):
    """The brokers gave no offset for a partition the read needs."""


class OffsetReader:
    def __init__(
        self,
        options: SourceOptions,
        *,
        admin_factory: Callable[[], Admin] | None = None,
        consumer_factory: Callable[..., Consumer] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.options = options
        self._admin_factory = admin_factory or (
            lambda: Admin(options.bootstrap_servers, **{"client_id": "spate-spark-driver", **options.admin_settings()})
        )
        self._consumer_factory = consumer_factory or self._default_consumer
        self._clock = clock
        self._admin: Admin | None = None

    @property
    def admin(self) -> Admin:
        if self._admin is None:
            self._admin = self._admin_factory()
        return self._admin

    def close(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None

    # --- partitions -------------------------------------------------------------------------------

    def partitions(self) -> set[TopicPartition]:
        """The partitions the consumer strategy selects right now."""
        topics = self.admin.describe_topics(None)
        counts = {name: len(description.partitions) for name, description in topics.items()}
        return self.options.strategy.partitions(counts)

    # --- offsets ----------------------------------------------------------------------------------

    def earliest(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return self._lookup({tp: EARLIEST for tp in tps})

    def latest(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """High watermarks, or last stable offsets under read_committed."""
        return self._lookup({tp: LATEST for tp in tps})

    def offsets_for_times(self, timestamps: Mapping[TopicPartition, int]) -> dict[TopicPartition, int | None]:
        if not timestamps:
            return {}
        found = self.admin.list_offsets(dict(timestamps), isolation_level=self.options.isolation_level)
        return {tp: (None if result is None or result.offset < 0 else result.offset) for tp, result in found.items()}

    def _lookup(self, specs: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        if not specs:
            return {}
        found = self.admin.list_offsets(specs, isolation_level=self.options.isolation_level)
        return {tp: found[tp].offset for tp in specs if found.get(tp) is not None}

    def resolve(self, spec: OffsetSpec, tps: set[TopicPartition], *, ending: bool = False) -> dict[TopicPartition, int]:
        """Concrete offsets for ``spec`` over exactly ``tps``.

        Offset and timestamp JSON must name exactly the partitions read (as
        in Spark's Kafka source). A timestamp newer than every record
        resolves to the latest offset when ending, or when
        ``startingOffsetsByTimestampStrategy`` is ``latest``; otherwise it
        is an error naming the option.
        """
        resolved = self._resolve(spec, tps, ending)
        unresolved = sorted(tp for tp in tps if resolved.get(tp, -1) < 0)
        if unresolved:
            raise OffsetLookupError(
                f"no offsets could be looked up for {', '.join(map(str, unresolved))} (no leader answered in time)"
            )
        return resolved

    def _resolve(self, spec: OffsetSpec, tps: set[TopicPartition], ending: bool) -> dict[TopicPartition, int]:
        if isinstance(spec, Earliest):
            return self.earliest(tps)
        if isinstance(spec, Latest):
            return self.latest(tps)
        if isinstance(spec, SpecificOffsets):
            _check_same_partitions(spec.option, spec.offsets, tps)
            earliest = self.earliest(tp for tp, o in spec.offsets.items() if o == EARLIEST_OFFSET)
            latest = self.latest(tp for tp, o in spec.offsets.items() if o == LATEST_OFFSET)
            return {tp: earliest.get(tp, latest.get(tp, offset)) for tp, offset in spec.offsets.items()}
        if isinstance(spec, SpecificTimestamps):
            _check_same_partitions(spec.option, spec.timestamps, tps)
            return self._by_time(spec.timestamps, spec.option, ending)
        if isinstance(spec, GlobalTimestamp):
            return self._by_time({tp: spec.timestamp for tp in tps}, spec.option, ending)
        raise TypeError(f"not an offset spec: {spec!r}")

    def _by_time(self, timestamps: dict[TopicPartition, int], option: str, ending: bool) -> dict[TopicPartition, int]:
        found = self.offsets_for_times(timestamps)
        missing = sorted(tp for tp in timestamps if found.get(tp) is None)
        if missing and not ending and self.options.timestamp_not_found == "error":
            first = missing[0]
            raise SourceOptionError(
                option,
                f"no record of {first} has a timestamp at or after {timestamps[first]} "
                "(set startingOffsetsByTimestampStrategy to latest to start at the end instead)",
            )
        latest = self.latest(missing)
        return {tp: found[tp] if found.get(tp) is not None else latest[tp] for tp in timestamps}

    # --- record sizes -----------------------------------------------------------------------------

    def sample_sizes(
        self,
        starts: Mapping[TopicPartition, int],
        latest: Mapping[TopicPartition, int],
        max_bytes: int = MAX_SAMPLE_BYTES,
    ) -> dict[TopicPartition, SizeSample]:
        """Read up to ``max_bytes`` of records of each partition from its start, for size estimates.

        Partitions that cannot be sampled (data deleted, nothing arriving in
        time) are left out; the planner estimates them from the others.
        """
        wanted = {tp: starts[tp] for tp in latest if tp in starts and latest[tp] > starts[tp]}
        if not wanted:
            return {}
        offsets: dict[TopicPartition, list[int]] = {tp: [] for tp in wanted}
        sizes: dict[TopicPartition, list[int]] = {tp: [] for tp in wanted}
        covered = dict(wanted)
        skipped: set[TopicPartition] = set()
        include_headers = self.options.include_headers
        with self._consumer_factory(max(1024, min(max_bytes, MAX_SAMPLE_BYTES))) as consumer:
            consumer.assign(list(wanted))
            for tp, offset in wanted.items():
                consumer.seek(tp, offset)
            pending = set(wanted)
            deadline = self._clock() + _SAMPLE_TIMEOUT_S
            while pending and self._clock() < deadline:
                try:
                    batches = consumer.poll_batches(timeout_ms=200)
                except OffsetOutOfRangeError as exc:
                    skipped.add(exc.topic_partition)
                    pending.discard(exc.topic_partition)
                    consumer.pause(exc.topic_partition)
                    continue
                for batch in batches:
                    tp = batch.topic_partition
                    if tp not in pending:
                        continue
                    _add_sizes(batch, latest[tp], include_headers, offsets[tp], sizes[tp])
                for tp in list(pending):
                    covered[tp] = min(consumer.position(tp), latest[tp])
                    if covered[tp] >= latest[tp] or sum(sizes[tp]) >= max_bytes:
                        pending.discard(tp)
                        consumer.pause(tp)
        return {
            tp: SizeSample(wanted[tp], covered[tp], offsets[tp], sizes[tp])
            for tp in wanted
            if tp not in skipped and covered[tp] > wanted[tp]
        }

    def _default_consumer(self, max_partition_fetch_bytes: int) -> Consumer:
        settings: dict[str, Any] = {"client_id": "spate-spark-driver", **self.options.consumer_settings}
        settings.update(max_partition_fetch_bytes=max_partition_fetch_bytes, fetch_max_wait_ms=100)
        return Consumer(
            self.options.bootstrap_servers,
            isolation_level=self.options.isolation_level,
            auto_offset_reset="none",
            **settings,
        )


def _add_sizes(batch: Any, until: int, include_headers: bool, offsets: list[int], sizes: list[int]) -> None:
    for index, offset in enumerate(batch.offsets):
        if offset >= until:
            break
        key, value = batch.keys[index], batch.values[index]
        size = (len(key) if key else 0) + (len(value) if value else 0)
        if include_headers:
            size += sum(len(k.encode()) + (len(v) if v else 0) for k, v in batch.headers[index])
        offsets.append(offset)
        sizes.append(size)


def _check_same_partitions(option: str, given: Mapping[TopicPartition, int], tps: set[TopicPartition]) -> None:
    extra = sorted(set(given) - tps)
    missing = sorted(tps - set(given))
    if extra:
        raise SourceOptionError(
            option, f"names {', '.join(map(str, extra))}, which the query does not read (it does not exist "
                    "or is not selected by subscribe/subscribePattern/assign)"
        )
    if missing:
        raise SourceOptionError(
            option, f"must name every partition read; missing {', '.join(map(str, missing))} "
                    "(use -2 for earliest, -1 for latest)"
        )
