"""Completing prepared transactions: markers to every partition, then CompleteCommit / CompleteAbort.

Once PrepareCommit or PrepareAbort is written, the transaction's outcome is
decided; what is left is telling its partitions (Kafka's
TransactionMarkerChannelManager with its completion handler). The
:class:`MarkerWriter` gets the partitions still without a marker and
reports which took it; the rest are retried after a back-off, for as long
as this coordinator still holds the transaction. When every partition has
its marker, Complete* is written and the producer may start its next
transaction. Until then the id counts as *pending* and its producer's
requests are answered CONCURRENT_TRANSACTIONS.

A transaction is held while its ``__transaction_state`` partition is loaded
here. When the partition moves to another broker, or is reloaded, its
pending transactions are dropped (:meth:`TxnCompletion.drop_partition`);
a report arriving for a dropped attempt is ignored, so a late answer can
never complete a transaction twice or on the wrong coordinator. The broker
that loads the partition next finds the transaction still prepared and
completes it again from the start: markers are idempotent.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from broker_core.coordinator.scheduler import Scheduler
from broker_core.coordinator.transaction.txn_config import MARKER_RETRY_BACKOFF_MS
from broker_core.coordinator.transaction.txn_markers import MarkerOutcome, MarkerRequest, MarkerWriter
from broker_core.coordinator.transaction.txn_metadata import TxnMetadata
from broker_core.coordinator.transaction.txn_state import TxnState
from broker_core.coordinator.transaction.txn_state_manager import TransactionStateManager
from spate.protocol.errors import ErrorCode
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)


@dataclass(eq=False)
class _Attempt:
    """One coordinator's completion of one transaction; its identity tells a current report from a stale one."""

    transactional_id: str
    remaining: set[TopicPartition] = field(default_factory=set)


class TxnCompletion:
    def __init__(self, state: TransactionStateManager, markers: MarkerWriter, scheduler: Scheduler) -> None:
        self._state = state
        self._markers = markers
        self._scheduler = scheduler
        self._pending: dict[str, _Attempt] = {}
        self.active = False

    def is_pending(self, transactional_id: str) -> bool:
        return transactional_id in self._pending

    def start(self, txn: TxnMetadata) -> None:
        """Complete ``txn`` (just written as PrepareCommit/PrepareAbort) on a later turn of the loop."""
        attempt = self._pending[txn.transactional_id] = _Attempt(txn.transactional_id, set(txn.partitions))
        self._scheduler.call_later(0, lambda: self._send(attempt))

    def resume(self, partition: int | None = None) -> None:
        """Complete every prepared transaction not yet being completed (of ``partition`` only, if given):
        after a restart, or once a partition taken over from another broker is loaded."""
        for txn in self._state:
            if (txn.state.is_prepare and txn.transactional_id not in self._pending
                    and (partition is None or self._state.partition_for(txn.transactional_id) == partition)):
                logger.info("completing %s of transactional id %r found on load", txn.state.display_name,
                            txn.transactional_id)
                self.start(txn)

    def drop_partition(self, partition: int) -> None:
        """The ``__transaction_state`` partition left this coordinator (or is being reloaded)."""
        for transactional_id in [t for t in self._pending if self._state.partition_for(t) == partition]:
            del self._pending[transactional_id]

    def _is_current(self, attempt: _Attempt) -> bool:
        return self._pending.get(attempt.transactional_id) is attempt

    def _held_prepared(self, attempt: _Attempt) -> TxnMetadata | None:
        """The transaction if this attempt may still act on it; otherwise the attempt is abandoned."""
        transactional_id = attempt.transactional_id
        txn = self._state.get(transactional_id)
        if (not self._is_current(attempt) or not self.active or txn is None or not txn.state.is_prepare
                or self._state.coordinator_error(transactional_id) is not ErrorCode.NONE):
            if self._is_current(attempt):
                del self._pending[transactional_id]
            return None
        return txn

    def _send(self, attempt: _Attempt) -> None:
        txn = self._held_prepared(attempt)
        if txn is None:
            return
        if not attempt.remaining:
            self._complete(attempt)
            return
        request = MarkerRequest(txn.producer_id, txn.producer_epoch,
                                self._state.coordinator_epoch(attempt.transactional_id),
                                commit=txn.state is TxnState.PREPARE_COMMIT)
        self._markers.write_markers(request, sorted(attempt.remaining, key=str),
                                    lambda outcome: self._on_markers(attempt, outcome))

    def _on_markers(self, attempt: _Attempt, outcome: MarkerOutcome) -> None:
        if not self._is_current(attempt):
            return  # the transaction left this coordinator while its markers were out
        attempt.remaining = set(outcome.retry)
        if attempt.remaining:
            logger.debug("transactional id %r: %d partition(s) still without a marker", attempt.transactional_id,
                         len(attempt.remaining))
            self._scheduler.call_later(MARKER_RETRY_BACKOFF_MS, lambda: self._send(attempt))
            return
        self._complete(attempt)

    def _complete(self, attempt: _Attempt) -> None:
        txn = self._held_prepared(attempt)
        if txn is None:
            return
        now = self._scheduler.now_ms()
        error = self._state.put(txn.completed(now), now)
        if error is not ErrorCode.NONE:
            logger.warning("recording the end of transactional id %r failed (%s); retrying",
                           attempt.transactional_id, error.name)
            self._scheduler.call_later(MARKER_RETRY_BACKOFF_MS, lambda: self._send(attempt))
            return
        del self._pending[attempt.transactional_id]
        logger.debug("transactional id %r: %s", attempt.transactional_id,
                     self._state.get(attempt.transactional_id).state.display_name)
