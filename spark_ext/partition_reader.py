"""Reading one offset range on an executor, as Arrow record batches.

A task reads ``[from_offset, until_offset)`` of one partition with its own
consumer (assigned, not subscribed: no group membership) and stops once the
consumer's position reaches ``until_offset``. The position follows each
fetched batch's next offset, so a range that ends in a gap (a transaction
marker, compacted records, an aborted transaction under read_committed)
still finishes: the fetch that steps over the gap moves the position past
the end. Records at or beyond the end that came in the same fetched batch
are cut off.

The consumer hands the fetched batches over undecoded
(``Consumer.poll_raw_batches``: headers and CRCs checked, transaction
markers and aborted transactions already left out), and each is decoded
straight into Arrow columns by :mod:`spark_ext.columnar`; no Python object
is made per record.

If the log start offset moved past the position (retention or DeleteRecords
while the query was stopped or reading), the fetch is out of range and the
:class:`DataLossPolicy` decides: fail, or skip to the log start. If no
progress at all is made for ``poll_timeout_ms`` the task fails rather than
hang (the offsets it was promised never became readable).
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator

import numpy as np
import pyarrow as pa

from spark_ext.arrow_batches import DEFAULT_MAX_ROWS, ArrowBatchBuilder
from spark_ext.columnar import DEFAULT_VECTOR_THRESHOLD, decode_columnar
from spark_ext.consumer_cache import ConsumerCache, KeptConsumer
from spark_ext.data_loss import DataLossPolicy
from spark_ext.offset_ranges import OffsetRange
from spark_ext.options import SourceOptions
from spate.client import Consumer, OffsetOutOfRangeError, RawBatch
from spate.records.errors import CorruptRecordError
from spate.records.reader import decode_batch_columns

# One poll waits at most this long (ms), so the no-progress deadline is checked regularly.
_POLL_STEP_MS = 500


class RangeReadTimeoutError(TimeoutError):
    """The offsets a task was asked to read did not arrive in time."""


@dataclass(frozen=True)
class ReadSettings:
    """What an executor needs to read ranges; picklable."""

    bootstrap_servers: str
    isolation_level: str = "read_uncommitted"
    include_headers: bool = False
    fail_on_data_loss: bool = True
    poll_timeout_ms: int = 120_000
    max_rows_per_batch: int = DEFAULT_MAX_ROWS
    consumer_settings: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_options(cls, options: SourceOptions) -> ReadSettings:
        return cls(
            bootstrap_servers=options.bootstrap_servers,
            isolation_level=options.isolation_level,
            include_headers=options.include_headers,
            fail_on_data_loss=options.fail_on_data_loss,
            poll_timeout_ms=options.poll_timeout_ms,
            consumer_settings=dict(options.consumer_settings),
        )

    def cache_key(self) -> str:
        """What consumers made from these settings have in common (for :class:`ConsumerCache`)."""
        return repr((self.bootstrap_servers, self.isolation_level, sorted(self.consumer_settings.items())))

    def consumer(self) -> Consumer:
        settings = {"client_id": "spate-spark-reader", **self.consumer_settings}
        return Consumer(
            self.bootstrap_servers,
            isolation_level=self.isolation_level,
            auto_offset_reset="none",
            **settings,
        )


def read_range(
    rng: OffsetRange,
    settings: ReadSettings,
    *,
    consumer_factory: Callable[[ReadSettings], Consumer] | None = None,
    clock: Callable[[], float] = time.monotonic,
    cache: ConsumerCache | None = None,
) -> Iterator[pa.RecordBatch]:
    """Arrow batches holding every record of ``rng`` (in offset order).

    With a ``cache``, the consumer comes from it when one is kept for the
    partition, and goes back to it once the range is read.
    """
    if rng.size <= 0:
        return
    tp = rng.topic_partition
    key = settings.cache_key()
    kept = _checkout(rng, settings, consumer_factory, cache)
    finished = False
    try:
        yield from _read(kept, rng, settings, clock)
        finished = True
    finally:
        if finished and cache is not None:
            cache.release(key, tp, kept)
        else:
            kept.consumer.close()


def _checkout(
    rng: OffsetRange,
    settings: ReadSettings,
    consumer_factory: Callable[[ReadSettings], Consumer] | None,
    cache: ConsumerCache | None,
) -> KeptConsumer:
    """A consumer of the range's partition placed at its start: kept from an earlier task, or new."""
    tp = rng.topic_partition
    kept = cache.acquire(settings.cache_key(), tp) if cache is not None else None
    if kept is None:
        consumer = consumer_factory(settings) if consumer_factory is not None else settings.consumer()
        consumer.assign([tp])
        consumer.seek(tp, rng.from_offset)
        return KeptConsumer(consumer, rng.from_offset)
    if kept.next_offset != rng.from_offset:
        kept.consumer.seek(tp, rng.from_offset)
        kept.leftover = []
        kept.next_offset = rng.from_offset
    return kept


def _read(
    kept: KeptConsumer, rng: OffsetRange, settings: ReadSettings, clock: Callable[[], float]
) -> Iterator[pa.RecordBatch]:
    consumer, tp, until = kept.consumer, rng.topic_partition, rng.until_offset
    policy = DataLossPolicy(settings.fail_on_data_loss)
    builder = ArrowBatchBuilder(settings.include_headers, settings.max_rows_per_batch)
    batches, kept.leftover = kept.leftover, []
    # Past the start when the consumer was kept (after the leftover records, or markers at the start).
    position = consumer.position(tp)
    progress_deadline = clock() + settings.poll_timeout_ms / 1000
    while True:
        for batch in batches:
            _add_batch(builder, batch, until)
            if builder.full:
                yield builder.build()
        if position >= until:
            break
        try:
            batches = consumer.poll_raw_batches(timeout_ms=_POLL_STEP_MS)
        except OffsetOutOfRangeError as exc:
            batches = []
            position = _after_out_of_range(consumer, exc, position, policy)
            if position < until:
                consumer.seek(tp, position)
            progress_deadline = clock() + settings.poll_timeout_ms / 1000
            continue
        moved = consumer.position(tp)
        if moved > position:
            position = moved
            progress_deadline = clock() + settings.poll_timeout_ms / 1000
        elif clock() >= progress_deadline:
            raise RangeReadTimeoutError(
                f"{tp}: offsets [{position}, {until}) could not be read within "
                f"kafkaConsumer.pollTimeoutMs ({settings.poll_timeout_ms} ms)"
            )
    # Records fetched past the end are the next range's when it starts here (the next micro-batch).
    kept.leftover = [
        replace(b, start_offset=max(b.start_offset, until)) for b in batches if b.header.last_offset >= until
    ]
    kept.next_offset = until
    last = builder.build()
    if last is not None:
        yield last


def _add_batch(builder: ArrowBatchBuilder, batch: RawBatch, until: int) -> None:
    """Decode ``batch`` into columns and add its records in ``[start_offset, until)``."""
    header = batch.header
    if batch.start_offset >= until or header.last_offset < batch.start_offset:
        return
    try:
        # The consumer checked the CRC (unless check_crcs is off); the record checks all run.
        if header.records_count < DEFAULT_VECTOR_THRESHOLD:
            _add_small_batch(builder, batch, until)
            return
        columns = decode_columnar(
            batch.buffer, batch.position, include_headers=builder.include_headers, check_crc=False
        )
    except CorruptRecordError as exc:
        raise CorruptRecordError(f"{batch.topic_partition} batch at offset {header.base_offset}: {exc}") from None
    offsets = columns.offsets
    start = int(np.searchsorted(offsets, batch.start_offset)) if batch.start_offset > header.base_offset else 0
    stop = int(np.searchsorted(offsets, until)) if header.last_offset >= until else len(columns)
    builder.add_columns(batch.topic, batch.partition, columns, start, stop)


def _add_small_batch(builder: ArrowBatchBuilder, batch: RawBatch, until: int) -> None:
    """Decode a batch of a few records into lists, which the builder converts together with its neighbours'.

    A producer at a low rate or a short linger sends batches of a handful of
    records; building arrays for each would cost more than decoding them.
    """
    rows = decode_batch_columns(batch.buffer, batch.position, check_crc=False)
    offsets = rows.offsets
    start = bisect.bisect_left(offsets, batch.start_offset)
    stop = bisect.bisect_left(offsets, until)
    builder.add_lists(batch.topic, batch.partition, int(batch.header.is_log_append_time), rows, start, stop)


def _after_out_of_range(
    consumer: Consumer, exc: OffsetOutOfRangeError, position: int, policy: DataLossPolicy
) -> int:
    tp = exc.topic_partition
    log_start = exc.log_start_offset
    if log_start < 0:
        log_start = consumer.beginning_offsets([tp])[tp]
    if log_start <= position:
        # Out of range above the log end: the offsets were promised but the log no longer reaches them.
        raise exc
    return policy.resolve_start(tp, position, log_start)
