"""What the coordinator knows of one transactional id, as one immutable value.

The same value is written to ``__transaction_state`` and held in the cache:
a change is computed as a new :class:`TxnMetadata`, checked against the state
machine, written, and only then cached, so the cache never holds what a
restart would not bring back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

from broker_core.coordinator.transaction.txn_state import TxnState
from spate.structs import TopicPartition

# Epochs are int16; the last usable value is kept free so fencing can always bump once more.
MAX_PRODUCER_EPOCH = 2**15 - 2
NO_START_TIMESTAMP = -1


@dataclass(frozen=True)
class TxnMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState
    partitions: frozenset[TopicPartition]
    last_update_ms: int
    start_ms: int = NO_START_TIMESTAMP

    @property
    def epoch_exhausted(self) -> bool:
        return self.producer_epoch >= MAX_PRODUCER_EPOCH

    def with_partitions_added(self, added: Iterable[TopicPartition], now: int) -> TxnMetadata:
        """Ongoing with ``added`` joined; a transaction starting now gets its start time."""
        starting = self.state is not TxnState.ONGOING
        return replace(
            self,
            state=TxnState.ONGOING,
            partitions=(frozenset() if starting else self.partitions) | frozenset(added),
            start_ms=now if starting else self.start_ms,
            last_update_ms=now,
        )

    def prepared(self, *, commit: bool, now: int, bump_epoch: bool = False) -> TxnMetadata:
        """PrepareCommit or PrepareAbort; ``bump_epoch`` fences the producer that holds the epoch now."""
        return replace(
            self,
            state=TxnState.PREPARE_COMMIT if commit else TxnState.PREPARE_ABORT,
            producer_epoch=self.producer_epoch + 1 if bump_epoch else self.producer_epoch,
            last_update_ms=now,
        )

    def completed(self, now: int) -> TxnMetadata:
        state = TxnState.COMPLETE_COMMIT if self.state is TxnState.PREPARE_COMMIT else TxnState.COMPLETE_ABORT
        return replace(self, state=state, partitions=frozenset(), last_update_ms=now)

    def reinitialized(self, *, producer_id: int, producer_epoch: int, timeout_ms: int, now: int) -> TxnMetadata:
        """Empty under a (possibly new) producer id and epoch: what InitProducerId leaves."""
        return replace(
            self,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            timeout_ms=timeout_ms,
            state=TxnState.EMPTY,
            partitions=frozenset(),
            start_ms=NO_START_TIMESTAMP,
            last_update_ms=now,
        )

    def has_expired_timeout(self, now: int) -> bool:
        return self.state is TxnState.ONGOING and now > self.start_ms + self.timeout_ms
