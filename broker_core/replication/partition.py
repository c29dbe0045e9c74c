"""One partition as its leader sees it: log, producer state, epochs, watermarks.

The partition is where the produce path's checks meet the log: batch headers
are validated once, producer state (idempotence) is checked for every batch
of a request before any of them is written, and only then does the log append
them. Everything here is synchronous and runs on the broker's event-loop
thread, so a partition has exactly one writer.

With a single replica the high watermark is the log end offset after every
append; replication (ISR, followers) will move it from fetch positions.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Iterator

from broker_core.records.batch import BatchHeader, iter_batches
from broker_core.records.errors import CorruptRecordError
from broker_core.records.reader import decode_batch
from broker_core.storage.epoch_cache import LeaderEpochFileCache
from broker_core.storage.fetch_slice import FetchSlice
from broker_core.storage.producer_state import (
    DuplicateBatch,
    OutOfOrderSequenceError,
    ProducerAppendInfo,
    ProducerStateManager,
)

logger = logging.getLogger(__name__)

READ_UNCOMMITTED = 0
READ_COMMITTED = 1
# Producer-state replay reads the log in chunks of this size.
REPLAY_READ_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class PartitionAppendResult:
    base_offset: int
    last_offset: int
    log_append_time: int
    log_start_offset: int
    duplicate: bool = False


@dataclass(frozen=True, slots=True)
class PartitionRead:
    slice: FetchSlice
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int


class Partition:
    """A partition led by this broker."""

    def __init__(
        self,
        topic: str,
        index: int,
        log,  # broker_core.storage.log.Log
        *,
        leader_epoch: int,
        clock: Callable[[], int],
        producer_id_expiration_ms: int,
    ) -> None:
        self.topic = topic
        self.index = index
        self.log = log
        self.leader_epoch = leader_epoch
        self._clock = clock
        self.epoch_cache = LeaderEpochFileCache(log.directory)
        self.producer_state = ProducerStateManager(
            log.directory, clock=clock, max_producer_id_expiration_ms=producer_id_expiration_ms
        )
        self._recover_producer_state()
        self.epoch_cache.assign(leader_epoch, log.log_end_offset)
        self.high_watermark = log.log_end_offset

    def __repr__(self) -> str:
        return f"Partition({self.topic}-{self.index})"

    # --- state -----------------------------------------------------------------------------

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        """The first offset of the earliest open transaction, else the high watermark."""
        unstable = self.producer_state.first_unstable_offset()
        if unstable is None:
            return self.high_watermark
        return min(unstable, self.high_watermark)

    def _recover_producer_state(self) -> None:
        replay_from = self.producer_state.load(self.log.log_start_offset, self.log.log_end_offset)
        if replay_from < self.log.log_end_offset:
            self.producer_state.rebuild_from(self._batch_headers_from(replay_from))
        self.producer_state.update_map_end_offset(self.log.log_end_offset)

    def _batch_headers_from(self, offset: int) -> Iterator[BatchHeader]:
        """Headers of the batches from ``offset`` to the log end, a segment's worth at a time."""
        end = self.log.log_end_offset
        while offset < end:
            chunk = self.log.read(offset, REPLAY_READ_BYTES).read_bytes()
            if not chunk:
                return
            for header in iter_batches(chunk, check_crc=False):
                yield header
                offset = header.next_offset

    # --- produce ---------------------------------------------------------------------------

    def append_records(self, records: memoryview | bytes) -> PartitionAppendResult:
        """Validate, check producer state, append; raise a typed error on any problem.

        Nothing is written unless every batch of the request passes. A retried
        batch an idempotent producer already wrote is answered with its
        original offsets and not written again.
        """
        # Framing, magic and counts are checked here; the log's append makes
        # the one CRC pass, so producer state is never updated for a batch it refuses.
        headers = list(iter_batches(records, check_crc=False))
        if not headers:
            raise CorruptRecordError("produce request carries no record batch")
        staged = self._stage_producer_state(headers)
        if len(staged) == 1 and isinstance(staged[0], DuplicateBatch):
            original = staged[0]
            return PartitionAppendResult(
                original.first_offset, original.last_offset, -1, self.log.log_start_offset, duplicate=True
            )
        if any(isinstance(info, DuplicateBatch) for info in staged):
            # A duplicate mixed with new batches cannot be answered with one base offset.
            raise OutOfOrderSequenceError("request mixes a retried batch with new ones")
        info = self.log.append(records, leader_epoch=self.leader_epoch)
        now = self._clock()
        for header, producer_info in zip(info.batches, staged):
            if isinstance(producer_info, ProducerAppendInfo):
                self.producer_state.complete_append(producer_info, header.base_offset, header.last_offset, now)
        self.producer_state.update_map_end_offset(self.log.log_end_offset)
        self.high_watermark = self.log.log_end_offset
        return PartitionAppendResult(
            info.first_offset, info.last_offset, info.log_append_time, self.log.log_start_offset
        )

    def _stage_producer_state(self, headers: list[BatchHeader]) -> list[ProducerAppendInfo | DuplicateBatch | None]:
        staging = self.producer_state.stage_append(is_from_client=True)
        return [staging.prepare(h) if h.has_producer_id else None for h in headers]

    # --- fetch -----------------------------------------------------------------------------

    def read(self, offset: int, max_bytes: int, *, isolation_level: int, min_one_batch: bool) -> PartitionRead:
        """Whole batches from ``offset`` below the high watermark (or the LSO)."""
        high_watermark = self.high_watermark
        stable = self.last_stable_offset
        limit = stable if isolation_level == READ_COMMITTED else high_watermark
        fetched = self.log.read(offset, max_bytes, max_offset=limit, min_one_batch=min_one_batch)
        return PartitionRead(fetched, high_watermark, stable, self.log.log_start_offset)

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """``(timestamp, offset)`` of the first record at or after ``timestamp``.

        The time index finds the batch; the batch is decoded to find the record,
        as clients expect a record offset, not a batch's base offset.
        """
        found = self.log.offset_for_timestamp(timestamp)
        if found is None:
            return None
        batch = decode_batch(self.log.read(found.offset, 1, min_one_batch=True).read_bytes())
        for record in batch.records:
            if record.timestamp >= timestamp and record.offset >= self.log.log_start_offset:
                return record.timestamp, record.offset
        return found.timestamp, found.offset

    # --- admin -----------------------------------------------------------------------------

    def delete_records_before(self, offset: int) -> int:
        """Move the log start offset (DeleteRecords); returns the new low watermark."""
        self.log.maybe_increment_log_start_offset(offset)
        return self.log.log_start_offset

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        return self.epoch_cache.end_offset_for(epoch, self.log.log_end_offset)

    def checkpoint(self) -> None:
        """Snapshot producer state at the log end (clean shutdown, segment roll)."""
        self.log.flush()
        self.producer_state.take_snapshot(self.log.log_end_offset)
