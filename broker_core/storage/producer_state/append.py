"""Checking an append against producer state before anything is written.

Every batch that carries a producer id passes through two steps::

    staging = state.stage_append(origin=...)       # or state.prepare_append(h)
    infos = [staging.prepare(h) for h in headers]  # raises, nothing applied yet
    ... write the batches, learn their offsets ...
    state.complete_append(info, first, last, ts)   # once per batch, in order

``prepare`` only reads committed state plus what the same staging object has
already accepted, so a request whose second batch is refused leaves the
partition untouched. Recovery replays batch headers through the same two
steps (``ProducerStateManager.rebuild_from``), so live appends and replay
cannot drift apart.

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
refusing client-written control batches is the log validator's job.

Not thread-safe: a staging object lives for one append by the partition's
single writer.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Mapping

from broker_core.storage.producer_state.entry import (
    NO_COORDINATOR_EPOCH,
    AppendOrigin,
    DuplicateBatch,
    EndTxnMarker,
    ProducerAppendInfo,
    ProducerStateEntry,
)
from broker_core.storage.producer_state.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    TransactionCoordinatorFencedError,
)
from spate.records.batch import NO_PRODUCER_EPOCH, NO_SEQUENCE, BatchHeader

logger = logging.getLogger(__name__)

MAX_SEQUENCE = 2**31 - 1


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
        """The view once ``info`` is applied; mirrors ``ProducerStateEntry.after_append``."""
        if info.is_control:
            last_seq = self.last_seq if info.producer_epoch == self.epoch else NO_SEQUENCE
            coordinator_epoch = info.marker.coordinator_epoch if info.marker is not None else self.coordinator_epoch
            return _ProducerView(info.producer_epoch, last_seq, False, coordinator_epoch)
        return _ProducerView(
            info.producer_epoch, info.last_seq, self.in_transaction or info.is_transactional, self.coordinator_epoch
        )


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == MAX_SEQUENCE)


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
