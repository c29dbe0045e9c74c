"""Per-partition producer state: idempotent-producer dedup, epoch fencing and
the first offset of each open transaction.

Every batch that carries a producer id passes through two steps::

    staging = state.stage_append()                 # or state.prepare_append(h)
    infos = [staging.prepare(h) for h in headers]  # raises, nothing applied yet
    ... write the batches, learn their offsets ...
    state.complete_append(info, first, last, ts)   # once per batch, in order

``prepare`` only reads committed state plus what the same staging object has
already accepted, so a request whose second batch is refused leaves the
partition untouched. Recovery replays batch headers through the same two
steps (``rebuild_from``), so live appends and replay cannot drift apart.

Rules (those of Kafka's ProducerStateManager, checked on the batch header only):

* Epoch: a batch whose producer epoch is below the producer's current epoch
  is refused with ``InvalidProducerEpochError``.
* Duplicate: a client batch whose epoch and ``(first_seq, last_seq)`` equal
  one of the producer's last five batches is a retry; ``prepare`` returns a
  ``DuplicateBatch`` holding the original offsets and nothing is written.
* Sequence, same epoch: ``base_sequence`` must be ``last_seq + 1``, where the
  successor of 2**31-1 is 0; otherwise ``OutOfOrderSequenceError``.
* Sequence, new epoch: must start at 0; otherwise ``OutOfOrderSequenceError``.
* Unknown producer (no state here, e.g. its batches were deleted by retention
  or its state expired): any sequence is accepted, as Kafka does since 2.5
  (KIP-360). Within one staged request its later batches must still follow on.
* Transactions: a non-transactional batch from a producer with an open
  transaction is refused with ``InvalidTxnStateError``. A control batch (a
  commit or abort marker) closes the transaction; ``complete_append``
  reports the transaction it closed as a ``CompletedTxn`` (none when the
  producer had no open transaction here: the coordinator writes a marker to
  every partition of the transaction, written to or not). A marker whose
  coordinator epoch is below the last one seen for the producer is refused
  with ``TransactionCoordinatorFencedError``.

Where a batch comes from decides how much is checked (``AppendOrigin``):

* ``CLIENT``: a produce request. Every rule above.
* ``COORDINATOR``: written by the broker for a coordinator: transaction
  markers, transactional offset commits. Epochs and transaction state are
  checked; these batches carry no sequence, so sequences are not checked and
  no duplicate is looked for.
* ``REPLICATION``: copied from the leader's log, or replayed at recovery.
  Sequences are not checked, no duplicates are looked for, and a lower
  producer or coordinator epoch is logged rather than refused, because the
  leader's log is the truth a follower must mirror.

Control batches are prepared with their decoded marker (``EndTxnMarker``);
refusing client-written control batches is the produce path's job.

Not thread-safe: a partition has one writer, which holds the log's lock.
"""

from __future__ import annotations

import enum
import logging
import os
import re
import struct
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Callable, ClassVar, Iterable, Mapping

from crc32c import crc32c

from spate.records.batch import NO_PRODUCER_EPOCH, NO_SEQUENCE, NO_TIMESTAMP, BatchHeader
from spate.records.control import ControlType

logger = logging.getLogger(__name__)

NUM_BATCHES_TO_RETAIN = 5
SNAPSHOTS_TO_KEEP = 2
SNAPSHOT_SUFFIX = ".snapshot"
SNAPSHOT_VERSION = 1
NO_COORDINATOR_EPOCH = -1
MAX_SEQUENCE = 2**31 - 1

_SNAPSHOT_NAME = re.compile(r"^(\d{20})\.snapshot$")
_SNAPSHOT_TEMP_NAME = re.compile(r"^\d{20}\.snapshot\.tmp$")
_SNAPSHOT_HEADER = struct.Struct(">hIi")  # version, crc, entry count
_SNAPSHOT_CRC_START = 6  # the CRC covers everything after itself
_ENTRY = struct.Struct(">qhiqqb")
_BATCH = struct.Struct(">iiqqq")

Clock = Callable[[], int]
"""Wall-clock milliseconds since the epoch."""


# -- errors ------------------------------------------------------------------


class ProducerStateError(Exception):
    """A batch refused by producer-state validation; carries Kafka's error code."""

    error_code: ClassVar[int] = -1  # UNKNOWN_SERVER_ERROR; every concrete error sets its own
    retriable: ClassVar[bool] = False


class OutOfOrderSequenceError(ProducerStateError):
    """The batch's sequence does not follow the producer's last one (OUT_OF_ORDER_SEQUENCE_NUMBER)."""

    error_code = 45


class InvalidProducerEpochError(ProducerStateError):
    """The batch's producer epoch is older than one already seen: a fenced zombie (INVALID_PRODUCER_EPOCH)."""

    error_code = 47


class InvalidTxnStateError(ProducerStateError):
    """A non-transactional write from a producer with an open transaction (INVALID_TXN_STATE)."""

    error_code = 48


class TransactionCoordinatorFencedError(ProducerStateError):
    """A marker from a coordinator older than one that already wrote for the
    producer (TRANSACTION_COORDINATOR_FENCED)."""

    error_code = 52


class UnknownProducerIdError(ProducerStateError):
    """The broker holds no state for the producer (UNKNOWN_PRODUCER_ID).

    Validation does not raise it: since Kafka 2.5 (KIP-360) an unknown
    producer's first batch is accepted at any sequence, and clients rely on
    that after their state expired or left with deleted segments. It is
    defined for code that must report the condition under Kafka's code.
    """

    error_code = 59


class CorruptSnapshotError(Exception):
    """A producer-state snapshot that cannot be trusted (torn, bad CRC, bad layout)."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"corrupt producer-state snapshot {source}: {reason}")
        self.source = source
        self.reason = reason


# -- state -------------------------------------------------------------------


class AppendOrigin(enum.Enum):
    """Who wrote a batch, which decides the checks it gets (see the module docstring)."""

    CLIENT = "client"
    COORDINATOR = "coordinator"
    REPLICATION = "replication"

    @staticmethod
    def of(is_from_client: bool) -> AppendOrigin:
        """The origin the older ``is_from_client`` flag meant."""
        return AppendOrigin.CLIENT if is_from_client else AppendOrigin.REPLICATION


@dataclass(frozen=True, slots=True)
class EndTxnMarker:
    """The record of a control batch: commit or abort, and the coordinator's epoch."""

    control_type: ControlType
    coordinator_epoch: int

    @property
    def is_abort(self) -> bool:
        return self.control_type is ControlType.ABORT


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """A transaction a marker closed: its data began at ``first_offset``, the marker is at ``last_offset``."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """Where one appended batch of a producer landed, kept to answer retries."""

    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class ProducerStateEntry:
    """What the partition remembers about one producer id.

    ``batches`` holds the producer's last ``NUM_BATCHES_TO_RETAIN`` batches of
    its current epoch, oldest first (the client keeps at most five requests in
    flight, so five is enough to recognise any retry).
    """

    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    batches: tuple[BatchMetadata, ...] = ()
    coordinator_epoch: int = NO_COORDINATOR_EPOCH
    current_txn_first_offset: int | None = None
    last_timestamp: int = NO_TIMESTAMP

    @property
    def first_seq(self) -> int:
        return self.batches[0].first_seq if self.batches else NO_SEQUENCE

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    def find_duplicate(self, producer_epoch: int, first_seq: int, last_seq: int) -> BatchMetadata | None:
        """The retained batch with exactly this epoch and sequence range, if any."""
        if producer_epoch != self.producer_epoch:
            return None
        for batch in self.batches:
            if batch.first_seq == first_seq and batch.last_seq == last_seq:
                return batch
        return None


@dataclass(frozen=True, slots=True)
class ProducerAppendInfo:
    """A validated batch waiting for its log write; apply it with ``complete_append``."""

    producer_id: int
    producer_epoch: int
    first_seq: int
    last_seq: int
    last_offset_delta: int
    is_transactional: bool
    is_control: bool
    marker: EndTxnMarker | None = None


@dataclass(frozen=True, slots=True)
class DuplicateBatch:
    """A retried batch already in the log: reply success with its original offsets."""

    producer_id: int
    producer_epoch: int
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class _ProducerView:
    """The part of a producer's state that validation reads."""

    epoch: int
    last_seq: int
    in_transaction: bool
    coordinator_epoch: int = NO_COORDINATOR_EPOCH

    @staticmethod
    def of(entry: ProducerStateEntry | None) -> _ProducerView:
        if entry is None:
            return _ProducerView(NO_PRODUCER_EPOCH, NO_SEQUENCE, False)
        return _ProducerView(
            entry.producer_epoch,
            entry.last_seq,
            entry.current_txn_first_offset is not None,
            entry.coordinator_epoch,
        )

    def after(self, info: ProducerAppendInfo) -> _ProducerView:
        """The view once ``info`` is applied; mirrors ``_apply``."""
        if info.is_control:
            last_seq = self.last_seq if info.producer_epoch == self.epoch else NO_SEQUENCE
            coordinator_epoch = info.marker.coordinator_epoch if info.marker is not None else self.coordinator_epoch
            return _ProducerView(info.producer_epoch, last_seq, False, coordinator_epoch)
        return _ProducerView(
            info.producer_epoch, info.last_seq, self.in_transaction or info.is_transactional, self.coordinator_epoch
        )


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == MAX_SEQUENCE)


def _apply(
    entry: ProducerStateEntry, info: ProducerAppendInfo, first_offset: int, last_offset: int, timestamp: int
) -> ProducerStateEntry:
    # A new epoch starts a new sequence space, so older batches cannot be retries of it.
    batches = entry.batches if info.producer_epoch == entry.producer_epoch else ()
    if info.is_control:
        return replace(
            entry,
            producer_epoch=info.producer_epoch,
            batches=batches,
            coordinator_epoch=info.marker.coordinator_epoch if info.marker is not None else entry.coordinator_epoch,
            current_txn_first_offset=None,
            last_timestamp=timestamp,
        )
    batch = BatchMetadata(info.first_seq, info.last_seq, first_offset, last_offset, timestamp)
    txn_first = entry.current_txn_first_offset
    if info.is_transactional and txn_first is None:
        txn_first = first_offset
    return replace(
        entry,
        producer_epoch=info.producer_epoch,
        batches=(batches + (batch,))[-NUM_BATCHES_TO_RETAIN:],
        current_txn_first_offset=txn_first,
        last_timestamp=timestamp,
    )


class ProducerAppendStaging:
    """Validates the batches of one append, in order, without changing state.

    Each accepted batch is remembered here so the next batch of the same
    producer is checked against it; committed state changes only through
    ``ProducerStateManager.complete_append``. Only a producer's first batch
    in the staging is compared with its retained batches: a staged batch has
    no offsets to answer a retry with, and a retry following a new batch in
    the same request is out of order. (Clients send one batch per partition
    per request, so this matters only for malformed requests.)
    """

    def __init__(self, committed: Mapping[int, ProducerStateEntry], *, origin: AppendOrigin) -> None:
        self._committed = committed
        self._origin = origin
        self._staged: dict[int, _ProducerView] = {}

    @property
    def origin(self) -> AppendOrigin:
        return self._origin

    def prepare(self, header: BatchHeader, marker: EndTxnMarker | None = None) -> ProducerAppendInfo | DuplicateBatch:
        """Check one batch; raise a ``ProducerStateError`` or return what to apply.

        A control batch needs its decoded ``marker``; other batches take none.
        """
        pid = header.producer_id
        if not header.has_producer_id:
            raise ValueError(f"batch at offset {header.base_offset} has no producer id, so no producer state")
        if header.is_control != (marker is not None):
            raise ValueError(
                f"batch at offset {header.base_offset}: a marker goes with control batches, and only with them"
            )
        committed = self._committed.get(pid)
        from_client = self._origin is AppendOrigin.CLIENT
        if from_client and not header.is_control and committed is not None and pid not in self._staged:
            original = committed.find_duplicate(header.producer_epoch, header.base_sequence, header.last_sequence)
            if original is not None:
                return DuplicateBatch(
                    pid,
                    header.producer_epoch,
                    original.first_seq,
                    original.last_seq,
                    original.first_offset,
                    original.last_offset,
                    original.timestamp,
                )
        view = self._staged[pid] if pid in self._staged else _ProducerView.of(committed)
        self._check_epoch(view, header)
        if marker is not None:
            self._check_coordinator_epoch(view, header, marker)
        else:
            if from_client:
                self._check_sequence(view, header)
            if view.in_transaction and not header.is_transactional:
                raise InvalidTxnStateError(
                    f"producer {pid} wrote a non-transactional batch at offset {header.base_offset} "
                    f"while its transaction is open"
                )
        info = ProducerAppendInfo(
            producer_id=pid,
            producer_epoch=header.producer_epoch,
            first_seq=header.base_sequence,
            last_seq=header.last_sequence,
            last_offset_delta=header.last_offset_delta,
            is_transactional=header.is_transactional,
            is_control=header.is_control,
            marker=marker,
        )
        self._staged[pid] = view.after(info)
        return info

    def _check_epoch(self, view: _ProducerView, header: BatchHeader) -> None:
        if header.producer_epoch >= view.epoch:
            return
        message = (
            f"producer {header.producer_id} wrote epoch {header.producer_epoch} at offset "
            f"{header.base_offset}, older than its current epoch {view.epoch}"
        )
        if self._origin is AppendOrigin.REPLICATION:
            logger.warning("%s; accepted because it comes from the leader's log", message)
            return
        raise InvalidProducerEpochError(message)

    def _check_coordinator_epoch(self, view: _ProducerView, header: BatchHeader, marker: EndTxnMarker) -> None:
        if marker.coordinator_epoch >= view.coordinator_epoch:
            return
        message = (
            f"marker for producer {header.producer_id} at offset {header.base_offset} carries coordinator "
            f"epoch {marker.coordinator_epoch}, older than {view.coordinator_epoch}"
        )
        if self._origin is AppendOrigin.REPLICATION:
            logger.info("%s; accepted because it comes from the leader's log", message)
            return
        raise TransactionCoordinatorFencedError(message)

    @staticmethod
    def _check_sequence(view: _ProducerView, header: BatchHeader) -> None:
        pid, seq = header.producer_id, header.base_sequence
        if header.producer_epoch != view.epoch:
            # An unknown producer may resume at any sequence (Kafka >= 2.5).
            if seq != 0 and view.epoch != NO_PRODUCER_EPOCH:
                raise OutOfOrderSequenceError(
                    f"producer {pid} started epoch {header.producer_epoch} at sequence {seq}; "
                    f"a new epoch must start at 0 (current epoch {view.epoch})"
                )
        elif view.epoch != NO_PRODUCER_EPOCH and not _in_sequence(view.last_seq, seq):
            raise OutOfOrderSequenceError(
                f"producer {pid} epoch {header.producer_epoch} sent sequence {seq} at offset "
                f"{header.base_offset}; expected {(view.last_seq + 1) & MAX_SEQUENCE}"
            )


# -- snapshot format ---------------------------------------------------------


def snapshot_path(partition_dir: Path, offset: int) -> Path:
    """``<partition_dir>/<20-digit offset>.snapshot``."""
    return partition_dir / f"{offset:020d}{SNAPSHOT_SUFFIX}"


def encode_snapshot(entries: Iterable[ProducerStateEntry]) -> bytes:
    """Serialize producer entries (big-endian)::

        0   version                  int16   1
        2   crc                      uint32  CRC-32C of bytes 6..end
        6   entry count              int32
        10  entries, by producer id:
              producer_id              int64
              producer_epoch           int16
              coordinator_epoch        int32
              last_timestamp           int64
              current_txn_first_offset int64   -1: no open transaction
              batch count              int8    0..5
              batches, oldest first:
                first_seq     int32
                last_seq      int32
                first_offset  int64
                last_offset   int64
                timestamp     int64
    """
    ordered = sorted(entries, key=lambda e: e.producer_id)
    body = bytearray(struct.pack(">i", len(ordered)))
    for entry in ordered:
        txn_first = -1 if entry.current_txn_first_offset is None else entry.current_txn_first_offset
        body += _ENTRY.pack(
            entry.producer_id,
            entry.producer_epoch,
            entry.coordinator_epoch,
            entry.last_timestamp,
            txn_first,
            len(entry.batches),
        )
        for b in entry.batches:
            body += _BATCH.pack(b.first_seq, b.last_seq, b.first_offset, b.last_offset, b.timestamp)
    return struct.pack(">hI", SNAPSHOT_VERSION, crc32c(bytes(body))) + bytes(body)


def decode_snapshot(data: bytes, *, source: str = "<bytes>") -> list[ProducerStateEntry]:
    """Parse ``encode_snapshot`` output; any deviation raises ``CorruptSnapshotError``."""
    if len(data) < _SNAPSHOT_HEADER.size:
        raise CorruptSnapshotError(source, f"{len(data)} bytes, shorter than the {_SNAPSHOT_HEADER.size}-byte header")
    version, stored_crc, count = _SNAPSHOT_HEADER.unpack_from(data, 0)
    if version != SNAPSHOT_VERSION:
        raise CorruptSnapshotError(source, f"unknown version {version}")
    actual_crc = crc32c(data[_SNAPSHOT_CRC_START:])
    if actual_crc != stored_crc:
        raise CorruptSnapshotError(source, f"CRC mismatch: stored {stored_crc:#010x}, computed {actual_crc:#010x}")
    if count < 0:
        raise CorruptSnapshotError(source, f"negative entry count {count}")
    entries: list[ProducerStateEntry] = []
    pos = _SNAPSHOT_HEADER.size
    for _ in range(count):
        if pos + _ENTRY.size > len(data):
            raise CorruptSnapshotError(source, f"entry at byte {pos} is truncated")
        pid, epoch, coordinator_epoch, last_ts, txn_first, n_batches = _ENTRY.unpack_from(data, pos)
        pos += _ENTRY.size
        if not 0 <= n_batches <= NUM_BATCHES_TO_RETAIN:
            raise CorruptSnapshotError(source, f"producer {pid} lists {n_batches} batches")
        if pos + n_batches * _BATCH.size > len(data):
            raise CorruptSnapshotError(source, f"batches of producer {pid} are truncated")
        batches = []
        for _ in range(n_batches):
            batches.append(BatchMetadata(*_BATCH.unpack_from(data, pos)))
            pos += _BATCH.size
        entries.append(
            ProducerStateEntry(
                producer_id=pid,
                producer_epoch=epoch,
                batches=tuple(batches),
                coordinator_epoch=coordinator_epoch,
                current_txn_first_offset=None if txn_first < 0 else txn_first,
                last_timestamp=last_ts,
            )
        )
    if pos != len(data):
        raise CorruptSnapshotError(source, f"{len(data) - pos} trailing bytes")
    return entries


def _write_atomically(path: Path, data: bytes) -> None:
    """Leave either the old file or the complete new one at ``path``, even across a crash."""
    temp = path.with_name(path.name + ".tmp")
    with open(temp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temp, path)
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    # Makes the rename (or unlink) itself durable.
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# -- manager -----------------------------------------------------------------


class ProducerStateManager:
    """Producer state of one partition, with snapshots in its directory.

    ``map_end_offset`` is the offset up to which (exclusive) the state reflects
    the log. A snapshot named ``N.snapshot`` holds the state as of offset N:
    loading it and replaying the batches from N onwards rebuilds the state.

    Crash behaviour: snapshots are written to a temporary file, fsynced and
    renamed, so a crash leaves whole snapshots and at most a stray
    ``.snapshot.tmp`` (removed on ``load``). A snapshot damaged later is
    detected by its CRC; ``load`` skips it for the next older one and
    recovery replays more of the log.
    """

    def __init__(self, partition_dir: Path, *, clock: Clock, max_producer_id_expiration_ms: int) -> None:
        if max_producer_id_expiration_ms < 0:
            raise ValueError(f"max_producer_id_expiration_ms must be >= 0, got {max_producer_id_expiration_ms}")
        self._dir = Path(partition_dir)
        self._clock = clock
        self._expiration_ms = max_producer_id_expiration_ms
        self._producers: dict[int, ProducerStateEntry] = {}
        self._map_end_offset = 0

    # -- reading

    @property
    def partition_dir(self) -> Path:
        return self._dir

    @property
    def map_end_offset(self) -> int:
        return self._map_end_offset

    def active_producers(self) -> Mapping[int, ProducerStateEntry]:
        """A read-only view of every producer with state here."""
        return MappingProxyType(self._producers)

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self._producers.get(producer_id)

    def first_unstable_offset(self) -> int | None:
        """First offset of the oldest open transaction; ``None`` when none is open."""
        open_txns = (e.current_txn_first_offset for e in self._producers.values())
        return min((offset for offset in open_txns if offset is not None), default=None)

    # -- appending

    def stage_append(
        self, *, origin: AppendOrigin = AppendOrigin.CLIENT, is_from_client: bool | None = None
    ) -> ProducerAppendStaging:
        """Start validating the batches of one append (see ``ProducerAppendStaging``).

        ``is_from_client`` is the older spelling of ``origin`` (True: CLIENT,
        False: REPLICATION) and wins when given.
        """
        if is_from_client is not None:
            origin = AppendOrigin.of(is_from_client)
        return ProducerAppendStaging(self._producers, origin=origin)

    def prepare_append(
        self,
        header: BatchHeader,
        marker: EndTxnMarker | None = None,
        *,
        origin: AppendOrigin = AppendOrigin.CLIENT,
        is_from_client: bool | None = None,
    ) -> ProducerAppendInfo | DuplicateBatch:
        """Validate a single-batch append against committed state."""
        return self.stage_append(origin=origin, is_from_client=is_from_client).prepare(header, marker)

    def complete_append(
        self, info: ProducerAppendInfo, first_offset: int, last_offset: int, append_timestamp: int
    ) -> CompletedTxn | None:
        """Record a prepared batch once the log holds it at ``first_offset..last_offset``.

        ``append_timestamp`` is the time that ages the producer towards
        expiry and is returned to retries: the broker's append time, or the
        batch's max timestamp on replay. Batches must be completed in the
        order they were prepared. A marker returns the transaction it closed,
        or None when the producer had none open here.
        """
        if last_offset - first_offset != info.last_offset_delta:
            raise ValueError(
                f"producer {info.producer_id}: offsets {first_offset}..{last_offset} do not span the "
                f"batch's lastOffsetDelta {info.last_offset_delta}"
            )
        if last_offset < self._map_end_offset:
            raise ValueError(
                f"producer {info.producer_id}: batch ending at offset {last_offset} is already reflected "
                f"in producer state up to {self._map_end_offset}"
            )
        entry = self._producers.get(info.producer_id)
        if entry is None:
            entry = ProducerStateEntry(info.producer_id)
        completed = None
        if info.marker is not None and entry.current_txn_first_offset is not None:
            completed = CompletedTxn(
                info.producer_id, entry.current_txn_first_offset, last_offset, info.marker.is_abort
            )
        self._producers[info.producer_id] = _apply(entry, info, first_offset, last_offset, append_timestamp)
        self._map_end_offset = last_offset + 1
        return completed

    def update_map_end_offset(self, offset: int) -> None:
        """Note that the log reached ``offset`` through batches without producer ids."""
        self._map_end_offset = max(self._map_end_offset, offset)

    def rebuild_from(
        self,
        batches: Iterable[tuple[BatchHeader, EndTxnMarker | None]],
        *,
        on_completed: Callable[[CompletedTxn], None] | None = None,
    ) -> None:
        """Replay batches in log order through the normal append path.

        Each batch is its header and, for a control batch, its decoded
        marker. Batches ending below ``map_end_offset`` are already reflected
        and are skipped, so callers may pass whole segments.
        ``on_completed`` sees each transaction a replayed marker closes, right
        after the marker is applied.
        """
        for header, marker in batches:
            if header.last_offset < self._map_end_offset:
                continue
            if header.has_producer_id:
                info = self.prepare_append(header, marker, origin=AppendOrigin.REPLICATION)
                if not isinstance(info, ProducerAppendInfo):  # replay never looks for duplicates
                    raise RuntimeError(f"replay of offset {header.base_offset} returned {info!r}")
                completed = self.complete_append(info, header.base_offset, header.last_offset, header.max_timestamp)
                if completed is not None and on_completed is not None:
                    on_completed(completed)
            self.update_map_end_offset(header.next_offset)

    def remove_expired_producers(self, now: int) -> None:
        """Forget producers idle for the expiration time; open transactions keep theirs."""
        for pid in [pid for pid, e in self._producers.items() if self._is_expired(e, now)]:
            del self._producers[pid]

    def _is_expired(self, entry: ProducerStateEntry, now: int) -> bool:
        return entry.current_txn_first_offset is None and now - entry.last_timestamp >= self._expiration_ms

    # -- snapshots

    def snapshot_offsets(self) -> list[int]:
        """Offsets of the snapshot files in the partition directory, ascending."""
        if not self._dir.is_dir():
            return []
        offsets = []
        for path in self._dir.iterdir():
            match = _SNAPSHOT_NAME.match(path.name)
            if match and path.is_file():
                offsets.append(int(match.group(1)))
        return sorted(offsets)

    def take_snapshot(self, offset: int) -> Path:
        """Write the state as of ``offset`` and keep only the newest snapshots.

        ``offset`` is normally the log end offset; it may not be below
        ``map_end_offset``, or replay from it would apply batches twice.
        """
        if offset < self._map_end_offset:
            raise ValueError(
                f"snapshot offset {offset} is below the producer state's end offset {self._map_end_offset}"
            )
        path = snapshot_path(self._dir, offset)
        _write_atomically(path, encode_snapshot(self._producers.values()))
        self._map_end_offset = offset
        for old in self.snapshot_offsets()[:-SNAPSHOTS_TO_KEEP]:
            self._delete_snapshot(old)
        return path

    def load(self, log_start_offset: int, log_end_offset: int) -> int:
        """Replace the in-memory state with the newest usable snapshot.

        Snapshots outside ``[log_start_offset, log_end_offset]`` describe data
        that is gone and are deleted, as are corrupt ones (with a warning).
        Producers already expired by the clock are dropped. Returns the offset
        from which the caller must replay the log into ``rebuild_from``.
        """
        if log_start_offset > log_end_offset:
            raise ValueError(f"log start offset {log_start_offset} is past log end offset {log_end_offset}")
        self._producers.clear()
        self._remove_temp_files()
        self._delete_snapshots_outside(log_start_offset, log_end_offset)
        for offset in reversed(self.snapshot_offsets()):
            path = snapshot_path(self._dir, offset)
            try:
                entries = decode_snapshot(path.read_bytes(), source=str(path))
            except CorruptSnapshotError as exc:
                logger.warning("%s; deleting it and falling back to an older snapshot", exc)
                self._delete_snapshot(offset)
                continue
            now = self._clock()
            self._producers.update((e.producer_id, e) for e in entries if not self._is_expired(e, now))
            self._map_end_offset = offset
            return offset
        self._map_end_offset = log_start_offset
        return log_start_offset

    def truncate_and_reload(self, log_start_offset: int, log_end_offset: int) -> int:
        """Fit the state to a log now spanning ``log_start_offset..log_end_offset``.

        If the state already ends at ``log_end_offset`` it is kept; otherwise
        it is reloaded from a snapshot. Returns the offset to replay from
        (``log_end_offset`` when nothing needs replaying).
        """
        if log_start_offset > log_end_offset:
            raise ValueError(f"log start offset {log_start_offset} is past log end offset {log_end_offset}")
        self._delete_snapshots_outside(log_start_offset, log_end_offset)
        if log_end_offset != self._map_end_offset:
            return self.load(log_start_offset, log_end_offset)
        return log_end_offset

    def forget_state(self, map_end_offset: int) -> None:
        """Drop the in-memory state (snapshots stay) so a replay can start at ``map_end_offset``."""
        self._producers.clear()
        self._map_end_offset = map_end_offset

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Forget every producer and snapshot; the log now starts empty at ``offset``."""
        self._producers.clear()
        for old in self.snapshot_offsets():
            self._delete_snapshot(old)
        self._map_end_offset = offset

    def _delete_snapshots_outside(self, log_start_offset: int, log_end_offset: int) -> None:
        for offset in self.snapshot_offsets():
            if offset < log_start_offset or offset > log_end_offset:
                self._delete_snapshot(offset)

    def _delete_snapshot(self, offset: int) -> None:
        snapshot_path(self._dir, offset).unlink(missing_ok=True)

    def _remove_temp_files(self) -> None:
        if not self._dir.is_dir():
            return
        for path in self._dir.iterdir():
            if _SNAPSHOT_TEMP_NAME.match(path.name):
                path.unlink(missing_ok=True)
