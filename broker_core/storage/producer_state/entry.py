"""The values producer state is made of: what is remembered per producer, and
what validating a batch yields.

All are immutable; the manager replaces a producer's entry as a whole
(``ProducerStateEntry.after_append``), so a staged append can never leave an
entry half changed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

from spate.records.batch import NO_PRODUCER_EPOCH, NO_SEQUENCE, NO_TIMESTAMP
from spate.records.control import ControlType

NUM_BATCHES_TO_RETAIN = 5
NO_COORDINATOR_EPOCH = -1


class AppendOrigin(enum.Enum):
    """Who wrote a batch, which decides the checks it gets (see :mod:`.append`)."""

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

    def after_append(
        self, info: ProducerAppendInfo, first_offset: int, last_offset: int, timestamp: int
    ) -> ProducerStateEntry:
        """The entry once ``info`` landed at ``first_offset..last_offset``."""
        # A new epoch starts a new sequence space, so older batches cannot be retries of it.
        batches = self.batches if info.producer_epoch == self.producer_epoch else ()
        if info.is_control:
            return replace(
                self,
                producer_epoch=info.producer_epoch,
                batches=batches,
                coordinator_epoch=info.marker.coordinator_epoch if info.marker is not None else self.coordinator_epoch,
                current_txn_first_offset=None,
                last_timestamp=timestamp,
            )
        batch = BatchMetadata(info.first_seq, info.last_seq, first_offset, last_offset, timestamp)
        txn_first = self.current_txn_first_offset
        if info.is_transactional and txn_first is None:
            txn_first = first_offset
        return replace(
            self,
            producer_epoch=info.producer_epoch,
            batches=(batches + (batch,))[-NUM_BATCHES_TO_RETAIN:],
            current_txn_first_offset=txn_first,
            last_timestamp=timestamp,
        )
