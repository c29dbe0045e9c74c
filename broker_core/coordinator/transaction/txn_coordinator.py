"""The transaction coordinator: transactional ids, their producer epochs, and how transactions end.

Requests, in the order a transactional producer sends them::

    InitProducerId(id, timeout)        → producer id and a bumped epoch; an open
                                         transaction of an older instance is aborted
    AddPartitionsToTxn / AddOffsetsToTxn → partitions (or a group's offsets partition)
                                         join the transaction; the first starts it
    EndTxn(commit | abort)             → PrepareCommit/PrepareAbort is written and
                                         answered; markers follow, then Complete*

Fencing: a producer is identified by (producer id, epoch). InitProducerId
bumps the epoch, so requests of an older instance fail with PRODUCER_FENCED
and its markers-to-be are written with the new epoch, which partitions then
hold against it. A transaction left open past its timeout is aborted the
same way. Markers are written on a later turn of the event loop, so a
request that arrives while a transaction is being completed is answered
CONCURRENT_TRANSACTIONS and retried by the client, exactly as with Kafka.

After a restart, a transaction found in PrepareCommit or PrepareAbort is
completed: its markers are written again and Complete* recorded
(:mod:`txn_completion`).

In a cluster the coordinator of an id is the leader of its
``__transaction_state`` partition, and moves with it: ``on_elected`` loads
the partition (its ids answer COORDINATOR_LOAD_IN_PROGRESS meanwhile) and
completes the prepared transactions found there; ``on_resigned`` drops its
ids, their open transactions and markers in flight, and they answer
NOT_COORDINATOR. A transaction in flight during a move therefore ends
whole: a prepared one is completed by the new coordinator; an ongoing one
continues there with the producer's next request, or times out there.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Iterable

from broker_core.coordinator.scheduler import Scheduler, TimerHandle
from broker_core.coordinator.transaction.txn_completion import TxnCompletion
from broker_core.coordinator.transaction.txn_config import TxnConfig
from broker_core.coordinator.transaction.txn_markers import MarkerWriter
from broker_core.coordinator.transaction.txn_metadata import TxnMetadata
from broker_core.coordinator.transaction.txn_state import TxnState
from broker_core.coordinator.transaction.txn_state_manager import TransactionStateManager
from spate.protocol.errors import ErrorCode, KafkaError
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

E = ErrorCode
S = TxnState


@dataclass(frozen=True)
class InitProducerIdResult:
    error: ErrorCode
    producer_id: int = -1
    producer_epoch: int = -1


class TransactionCoordinator:
    def __init__(
        self,
        config: TxnConfig,
        state: TransactionStateManager,
        markers: MarkerWriter,
        scheduler: Scheduler,
        *,
        next_producer_id: Callable[[], int],
        partition_exists: Callable[[TopicPartition], bool],
        offsets_partition_for: Callable[[str], TopicPartition],
    ) -> None:
        self._config = config
        self._state = state
        self._scheduler = scheduler
        self._completion = TxnCompletion(state, markers, scheduler)
        self._next_producer_id = next_producer_id
        self._partition_exists = partition_exists
        self._offsets_partition_for = offsets_partition_for
        self._timers: list[TimerHandle] = []
        self._active = False
        self._stopped = False

    # --- lifecycle -------------------------------------------------------------------------

    def startup(self) -> None:
        """Serve: load the partitions led here now (at once) and complete the transactions they left prepared."""
        self._active = self._completion.active = True
        self._state.startup()
        self._completion.resume()
        self._every(self._config.abort_timed_out_interval_ms, self.abort_timed_out_transactions)
        self._every(self._config.remove_expired_interval_ms, self.remove_expired_transactional_ids)

    def shutdown(self) -> None:
        self._active = self._completion.active = False
        self._stopped = True
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()

    def _every(self, interval_ms: int, task: Callable[[], object]) -> None:
        def tick() -> None:
            if not self._active:
                return
            try:
                task()
            finally:
                self._timers.append(self._scheduler.call_later(interval_ms, tick))

        self._timers.append(self._scheduler.call_later(interval_ms, tick))

    def ensure_state_topic(self) -> int:
        count = self._state.ensure_topic()
        self._completion.resume()
        return count

    def on_elected(self, partition: int, leader_epoch: int) -> None:
        """This broker now leads ``__transaction_state-<partition>`` at ``leader_epoch`` (the coordinator
        epoch): its ids are loaded on a later turn, then its prepared transactions completed."""
        if self._stopped or not self._state.begin_load(partition, leader_epoch):
            return
        self._completion.drop_partition(partition)
        self._scheduler.call_later(0, lambda: self._load(partition, leader_epoch))

    def _load(self, partition: int, leader_epoch: int) -> None:
        if not self._stopped and self._state.load_partition(partition, leader_epoch):
            self._completion.resume(partition)

    def on_resigned(self, partition: int, leader_epoch: int | None) -> None:
        """This broker no longer leads ``__transaction_state-<partition>``: its ids, their transactions
        and their markers in flight are dropped here; the new leader loads and completes them."""
        if self._state.unload_partition(partition, leader_epoch):
            self._completion.drop_partition(partition)

    def partition_for(self, transactional_id: str) -> int:
        return self._state.partition_for(transactional_id)

    def coordinator_error(self, transactional_id: str) -> ErrorCode:
        """NONE when this broker coordinates the id now; else NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS."""
        return self._state.coordinator_error(transactional_id)

    def describe(self, transactional_id: str) -> TxnMetadata | None:
        return self._state.get(transactional_id)

    @property
    def is_loading(self) -> bool:
        return self._state.is_loading

    def transactions(self) -> list[TxnMetadata]:
        return list(self._state)

    # --- InitProducerId --------------------------------------------------------------------

    def init_producer_id(
        self, transactional_id: str, timeout_ms: int, expected: tuple[int, int] | None = None
    ) -> InitProducerIdResult:
        """A producer id and epoch for ``transactional_id``; the epoch is bumped if it had one.

        ``expected`` (InitProducerId v3+, KIP-360) is the ``(producer id, epoch)``
        the caller holds: another id or an older epoch than the current one is a
        fenced producer (PRODUCER_FENCED), except the epoch just before the
        current one of an idle id, a retry whose answer was lost, which gets the
        current epoch again.
        """
        if not transactional_id:
            return InitProducerIdResult(E.INVALID_REQUEST)
        if not 0 < timeout_ms <= self._config.max_timeout_ms:
            return InitProducerIdResult(E.INVALID_TRANSACTION_TIMEOUT)
        error = self._coordinator_error(transactional_id)
        if error is not E.NONE:
            return InitProducerIdResult(error)
        now = self._scheduler.now_ms()
        current = self._state.get(transactional_id)
        if expected is not None and current is not None:
            checked = _check_expected_producer(current, expected)
            if checked is not None:
                return checked
        if current is None:
            new = TxnMetadata(transactional_id, self._next_producer_id(), 0, timeout_ms, S.EMPTY, frozenset(), now)
        elif current.state.is_prepare or self._completion.is_pending(transactional_id):
            return InitProducerIdResult(E.CONCURRENT_TRANSACTIONS)
        elif current.state is S.ONGOING:
            # Fence the running instance: its transaction is aborted under a bumped epoch.
            # The caller retries once the abort is complete and gets the epoch after that.
            error = self._prepare(current.prepared(commit=False, now=now, bump_epoch=not current.epoch_exhausted))
            return InitProducerIdResult(error if error is not E.NONE else E.CONCURRENT_TRANSACTIONS)
        elif current.state.is_idle:
            if current.epoch_exhausted:
                producer_id, epoch = self._next_producer_id(), 0
            else:
                producer_id, epoch = current.producer_id, current.producer_epoch + 1
            new = current.reinitialized(producer_id=producer_id, producer_epoch=epoch, timeout_ms=timeout_ms, now=now)
        else:
            return InitProducerIdResult(E.CONCURRENT_TRANSACTIONS)
        error = self._state.put(new, now)
        if error is not E.NONE:
            return InitProducerIdResult(error)
        logger.info("transactional id %r: producer %d epoch %d", transactional_id, new.producer_id,
                    new.producer_epoch)
        return InitProducerIdResult(E.NONE, new.producer_id, new.producer_epoch)

    # --- AddPartitionsToTxn / AddOffsetsToTxn ----------------------------------------------

    def add_partitions(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]:
        partitions = list(dict.fromkeys(partitions))
        unknown = self._unknown(partitions)
        if unknown:
            return unknown
        error = self._add(transactional_id, producer_id, producer_epoch, partitions)
        return {tp: error for tp in partitions}

    def _unknown(self, partitions: list[TopicPartition]) -> dict[TopicPartition, ErrorCode] | None:
        """Kafka's rule: one unknown partition fails the request (UNKNOWN_TOPIC_OR_PARTITION, the others
        OPERATION_NOT_ATTEMPTED); None when every partition exists."""
        unknown = [tp for tp in partitions if not self._partition_exists(tp)]
        if not unknown:
            return None
        return {tp: E.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown else E.OPERATION_NOT_ATTEMPTED for tp in partitions}

    def verify_partitions(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]:
        """Whether each partition is already in the producer's ongoing transaction (a broker asks, KIP-890).

        NONE for one that is, TRANSACTION_ABORTABLE for one that is not (its
        records would not be covered by the transaction's markers); the
        producer's id and epoch are checked as for any transaction request,
        and a transaction being completed answers CONCURRENT_TRANSACTIONS.
        """
        partitions = list(dict.fromkeys(partitions))
        unknown = self._unknown(partitions)
        if unknown:
            return unknown
        current, error = self._checked(transactional_id, producer_id, producer_epoch)
        if current is not None and current.state.is_prepare:
            current, error = None, E.CONCURRENT_TRANSACTIONS
        if current is None:
            return {tp: error for tp in partitions}
        return {tp: E.NONE if tp in current.partitions else E.TRANSACTION_ABORTABLE for tp in partitions}

    def add_offsets(self, transactional_id: str, producer_id: int, producer_epoch: int, group_id: str) -> ErrorCode:
        return self._add(transactional_id, producer_id, producer_epoch, [self._offsets_partition_for(group_id)])

    def _add(self, transactional_id: str, producer_id: int, producer_epoch: int,
             partitions: list[TopicPartition]) -> ErrorCode:
        current, error = self._checked(transactional_id, producer_id, producer_epoch)
        if current is None:
            return error
        if current.state.is_prepare or self._completion.is_pending(transactional_id):
            return E.CONCURRENT_TRANSACTIONS
        if current.state is S.ONGOING and current.partitions.issuperset(partitions):
            return E.NONE
        if not (current.state is S.ONGOING or current.state.is_idle):
            return E.INVALID_TXN_STATE
        now = self._scheduler.now_ms()
        return self._state.put(current.with_partitions_added(partitions, now), now)

    # --- EndTxn ----------------------------------------------------------------------------

    def end_transaction(self, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool) -> ErrorCode:
        current, error = self._checked(transactional_id, producer_id, producer_epoch)
        if current is None:
            return error
        state = current.state
        wanted_prepare = S.PREPARE_COMMIT if commit else S.PREPARE_ABORT
        wanted_complete = S.COMPLETE_COMMIT if commit else S.COMPLETE_ABORT
        if state is S.ONGOING and not self._completion.is_pending(transactional_id):
            return self._prepare(current.prepared(commit=commit, now=self._scheduler.now_ms()))
        if state is wanted_complete:
            return E.NONE  # a retry of an EndTxn that already finished
        if state is wanted_prepare:
            return E.CONCURRENT_TRANSACTIONS
        return E.INVALID_TXN_STATE

    # --- TxnOffsetCommit -------------------------------------------------------------------

    def verify_offset_commit(self, transactional_id: str, producer_id: int, producer_epoch: int,
                             group_id: str) -> ErrorCode:
        """NONE when the transaction is open and AddOffsetsToTxn added ``group_id``'s partition.

        Only an id coordinated here can be checked: for one whose partition
        another broker leads, the commit is accepted unchecked, as Kafka's group
        coordinator accepts every TxnOffsetCommit (before KIP-890); the
        partition's marker still decides whether the offsets count.
        """
        if self._state.coordinator_error(transactional_id) is E.NOT_COORDINATOR and self._state.topic_exists():
            return E.NONE
        current, error = self._checked(transactional_id, producer_id, producer_epoch)
        if current is None:
            return error
        if current.state is not S.ONGOING or self._offsets_partition_for(group_id) not in current.partitions:
            return E.INVALID_TXN_STATE
        return E.NONE

    # --- completion ------------------------------------------------------------------------

    def _prepare(self, prepared: TxnMetadata) -> ErrorCode:
        error = self._state.put(prepared, self._scheduler.now_ms())
        if error is E.NONE:
            self._completion.start(prepared)
        return error

    # --- housekeeping ----------------------------------------------------------------------

    def abort_timed_out_transactions(self) -> int:
        """Abort (and fence) every open transaction older than its timeout; returns how many."""
        now = self._scheduler.now_ms()
        aborted = 0
        for txn in self._state:
            if (txn.has_expired_timeout(now) and not self._completion.is_pending(txn.transactional_id)
                    and self._coordinator_error(txn.transactional_id) is E.NONE):
                logger.info("aborting transaction of %r: open for %d ms, timeout %d ms", txn.transactional_id,
                            now - txn.start_ms, txn.timeout_ms)
                if self._prepare(txn.prepared(commit=False, now=now, bump_epoch=not txn.epoch_exhausted)) is E.NONE:
                    aborted += 1
        return aborted

    def remove_expired_transactional_ids(self) -> int:
        now = self._scheduler.now_ms()
        removed = 0
        for txn in self._state:
            if (txn.state.is_idle and now - txn.last_update_ms >= self._config.id_expiration_ms
                    and self._coordinator_error(txn.transactional_id) is E.NONE):
                if self._state.remove(txn.transactional_id, now) is E.NONE:
                    removed += 1
        return removed

    # --- checks ----------------------------------------------------------------------------

    def _coordinator_error(self, transactional_id: str) -> ErrorCode:
        error = self._state.coordinator_error(transactional_id)
        if error is E.NOT_COORDINATOR:
            # The topic may not exist yet (first transactional producer), or this broker just took it over.
            try:
                self.ensure_state_topic()
            except KafkaError as exc:
                return exc.code
            error = self._state.coordinator_error(transactional_id)
        return error

    def _checked(self, transactional_id: str, producer_id: int,
                 producer_epoch: int) -> tuple[TxnMetadata | None, ErrorCode]:
        error = self._coordinator_error(transactional_id)
        if error is not E.NONE:
            return None, error
        current = self._state.get(transactional_id)
        if current is None or current.producer_id != producer_id:
            return None, E.INVALID_PRODUCER_ID_MAPPING
        if current.producer_epoch != producer_epoch:
            return None, E.PRODUCER_FENCED
        return current, E.NONE


def _check_expected_producer(current: TxnMetadata, expected: tuple[int, int]) -> InitProducerIdResult | None:
    """None when the caller may have the next epoch; otherwise the answer (see ``init_producer_id``)."""
    producer_id, epoch = expected
    if producer_id != current.producer_id:
        return InitProducerIdResult(E.PRODUCER_FENCED)
    if epoch == current.producer_epoch:
        return None
    if epoch == current.producer_epoch - 1 and current.state.is_idle:
        return InitProducerIdResult(E.NONE, current.producer_id, current.producer_epoch)
    return InitProducerIdResult(E.PRODUCER_FENCED)
