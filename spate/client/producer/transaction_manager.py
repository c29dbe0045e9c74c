"""The producer's identity, sequence numbers and transactions.

Idempotence. An idempotent producer gets a producer id and epoch from
InitProducerId and numbers the records of each partition from 0 upwards.
Each batch carries its first record's sequence; the broker keeps the last
five batches of every producer and partition, answers a retry of one of
them as a duplicate instead of appending it again, and refuses a batch
whose sequence leaves a gap (OUT_OF_ORDER_SEQUENCE_NUMBER). Order is kept by
the rule in :meth:`TransactionManager.can_send`: a batch that already has a
sequence (a retry) goes out only once nothing else of its partition is in
flight, and retries are queued in sequence order, so the broker sees every
partition's sequences without gaps. A batch that fails for good leaves a gap
that the broker would never accept past, so a non-transactional producer
then resets its identity: a new producer id, sequences from 0, and every
batch not yet acknowledged is numbered afresh under it.

Transactions. With a transactional id the producer's id and epoch come from
the transaction coordinator, and the manager runs Kafka's producer-side
state machine (:data:`TRANSITIONS`)::

    UNINITIALIZED → INITIALIZING → READY ⇄ IN_TRANSACTION → COMMITTING → READY
                                             ↓      ↘ ABORTABLE_ERROR ↘
                                             ABORTING → READY (or INITIALIZING: new epoch)
    any state → FATAL_ERROR (fenced, or refused by the coordinator)

A partition joins the transaction (AddPartitionsToTxn) before its first
batch is sent: ``send`` notes new partitions, the sender asks for all of
them in one request, and :meth:`can_send` holds their batches back until
the coordinator has answered. EndTxn waits until no batch is incomplete. A
numbered batch that fails inside a transaction makes the transaction
abortable; after the abort the producer re-initializes to get a new epoch,
since its sequences have a gap.

Threads: the application calls the ``begin_*`` and ``check_*`` methods, the
sender thread everything else; transactional state is guarded by an internal
lock (taken after the producer's lock, never before it). The idempotence
bookkeeping (sequences, in-flight counts) belongs to the sender thread alone.
"""

from __future__ import annotations

import enum
import threading
from collections import defaultdict
from concurrent.futures import Future
from typing import Mapping

from spate.client.errors import (
    InvalidTxnStateError,
    ProducerFencedError,
    TransactionAbortableError,
    TransactionAbortedError,
)
from spate.client.producer.batch import ProducerBatch
from spate.client.producer.txn_requests import (
    CONCURRENT_TRANSACTIONS_BACKOFF,
    AddOffsetsToTxn,
    AddPartitionsToTxn,
    CoordinatorKey,
    EndTxn,
    FindCoordinator,
    InitProducerId,
    Outcome,
    TxnOffsetCommit,
    TxnRequest,
    fenced_error,
)
from spate.protocol import ErrorCode, KafkaError
from spate.records.batch import NO_PRODUCER_EPOCH, NO_PRODUCER_ID
from spate.structs import OffsetAndMetadata, TopicPartition

SEQUENCE_LIMIT = 1 << 31

# Produce answers after which a transactional producer must stop.
_FATAL_PRODUCE_ERRORS = frozenset(
    {
        ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        ErrorCode.TRANSACTION_COORDINATOR_FENCED,
    }
)


class TxnState(enum.Enum):
    UNINITIALIZED = "Uninitialized"
    INITIALIZING = "Initializing"
    READY = "Ready"
    IN_TRANSACTION = "InTransaction"
    COMMITTING = "CommittingTransaction"
    ABORTING = "AbortingTransaction"
    ABORTABLE_ERROR = "AbortableError"
    FATAL_ERROR = "FatalError"


S = TxnState
# Legal moves; any state may also go to FATAL_ERROR.
TRANSITIONS: Mapping[TxnState, frozenset[TxnState]] = {
    S.UNINITIALIZED: frozenset({S.INITIALIZING}),
    S.INITIALIZING: frozenset({S.READY}),
    S.READY: frozenset({S.IN_TRANSACTION}),
    S.IN_TRANSACTION: frozenset({S.COMMITTING, S.ABORTING, S.ABORTABLE_ERROR}),
    S.COMMITTING: frozenset({S.READY, S.ABORTABLE_ERROR}),
    S.ABORTING: frozenset({S.READY, S.INITIALIZING}),
    S.ABORTABLE_ERROR: frozenset({S.ABORTING, S.ABORTABLE_ERROR}),
    S.FATAL_ERROR: frozenset(),
}

# What each application call needs (a pending result of the same call may be awaited again).
_INIT, _COMMIT, _ABORT, _OFFSETS = "init_transactions", "commit_transaction", "abort_transaction", "send_offsets"


class TransactionManager:
    def __init__(self, transactional_id: str | None = None, transaction_timeout_ms: int = 60_000) -> None:
        if transactional_id is not None and not transactional_id:
            raise ValueError("transactional_id must not be empty")
        if transaction_timeout_ms <= 0:
            raise ValueError(f"transaction_timeout_ms must be positive, not {transaction_timeout_ms}")
        self.transactional_id = transactional_id
        self.transaction_timeout_ms = transaction_timeout_ms
        self.producer_id = NO_PRODUCER_ID
        self.producer_epoch = NO_PRODUCER_EPOCH
        self._next_sequence: dict[TopicPartition, int] = defaultdict(int)
        self._last_acked: dict[TopicPartition, int] = {}
        self._in_flight: dict[TopicPartition, int] = defaultdict(int)
        self.resets = 0

        self._lock = threading.Lock()
        self._state = S.UNINITIALIZED
        self._error: BaseException | None = None
        # Partitions of the current transaction: added, being added, and not asked for yet.
        self._added: set[TopicPartition] = set()
        self._adding: set[TopicPartition] = set()
        self._new: set[TopicPartition] = set()
        self._started = False  # the coordinator confirmed a partition or offsets in the transaction
        self._maybe_started = False  # an add was sent; its answer may have been lost
        self._epoch_bump_needed = False
        self._requests: list[TxnRequest] = []
        self._request_in_flight: TxnRequest | None = None
        self._finding: dict[CoordinatorKey, FindCoordinator] = {}
        self._coordinators: dict[CoordinatorKey, tuple[int, str, int]] = {}
        self._results: dict[str, Future[None]] = {}
        self._sequence_number = 0  # keeps requests of equal priority in arrival order

    # --- identity and sequences (sender thread) -------------------------------------------------

    @property
    def is_transactional(self) -> bool:
        return self.transactional_id is not None

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id != NO_PRODUCER_ID

    def set_producer_id(self, producer_id: int, producer_epoch: int) -> None:
        if producer_id < 0 or producer_epoch < 0:
            raise ValueError(f"invalid producer identity {producer_id}/{producer_epoch}")
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self._next_sequence.clear()
        self._last_acked.clear()

    def reset_producer_id(self) -> None:
        """Drop the identity; a new one is fetched and sequences restart at 0."""
        self.producer_id = NO_PRODUCER_ID
        self.producer_epoch = NO_PRODUCER_EPOCH
        self._next_sequence.clear()
        self._last_acked.clear()
        self.resets += 1

    def is_stale(self, batch: ProducerBatch) -> bool:
        """True for a batch numbered under an identity that has since been reset."""
        return batch.has_sequence and (batch.producer_id, batch.producer_epoch) != (
            self.producer_id,
            self.producer_epoch,
        )

    def can_send(self, batch: ProducerBatch) -> bool:
        """Whether the oldest batch of a partition may be drained now.

        New batches go at once, a retry waits until its partition has nothing
        in flight; in a transaction, only partitions the coordinator has
        added. (Read without the lock: the set grows only on the sender
        thread, the caller, and is cleared by ``begin_transaction`` only
        when no batch is left.)
        """
        if self.transactional_id is not None and batch.topic_partition not in self._added:
            return False
        if not batch.has_sequence or self.is_stale(batch):
            return True
        return self._in_flight[batch.topic_partition] == 0

    def assign_sequence(self, batch: ProducerBatch) -> None:
        """Number a batch about to be sent (a retry keeps its number)."""
        if batch.has_sequence and not self.is_stale(batch):
            return
        tp = batch.topic_partition
        sequence = self._next_sequence[tp]
        self._next_sequence[tp] = (sequence + batch.record_count) % SEQUENCE_LIMIT
        batch.set_producer_state(self.producer_id, self.producer_epoch, sequence, self.transactional_id is not None)

    def sent(self, batch: ProducerBatch) -> None:
        self._in_flight[batch.topic_partition] += 1

    def returned(self, batch: ProducerBatch) -> None:
        """A sent batch came back (acknowledged or not)."""
        tp = batch.topic_partition
        self._in_flight[tp] = max(0, self._in_flight[tp] - 1)

    def acknowledged(self, batch: ProducerBatch) -> None:
        if batch.has_sequence and not self.is_stale(batch):
            last = (batch.base_sequence + batch.record_count - 1) % SEQUENCE_LIMIT
            self._last_acked[batch.topic_partition] = last

    def is_next_to_acknowledge(self, batch: ProducerBatch) -> bool:
        """Whether every earlier sequence of the partition has been acknowledged.

        OUT_OF_ORDER_SEQUENCE_NUMBER for such a batch is a real gap; for any
        later batch it only means an earlier one is being retried.
        """
        expected = (self._last_acked.get(batch.topic_partition, -1) + 1) % SEQUENCE_LIMIT
        return batch.base_sequence == expected

    def in_flight(self, topic_partition: TopicPartition) -> int:
        return self._in_flight[topic_partition]

    # --- application calls ------------------------------------------------------------------------

    @property
    def state(self) -> TxnState:
        return self._state

    def begin_init(self) -> Future[None]:
        with self._lock:
            pending = self._pending(_INIT)
            if pending is not None:
                return pending
            self._check_usable(_INIT)
            if self._state is not S.UNINITIALIZED:
                raise InvalidTxnStateError("init_transactions() was already called on this producer")
            self._transition(S.INITIALIZING)
            result: Future[None] = Future()
            self._results[_INIT] = result
            self._enqueue(InitProducerId(result, self._txn_key))
            return result

    def begin_transaction(self) -> None:
        with self._lock:
            self._check_usable("begin_transaction")
            if self._state is S.UNINITIALIZED:
                raise InvalidTxnStateError("call init_transactions() before begin_transaction()")
            if self._state is not S.READY:
                raise InvalidTxnStateError(f"begin_transaction() while the producer is in state {self._state.value}")
            self._added.clear()
            self._adding.clear()
            self._new.clear()
            self._started = self._maybe_started = False
            self._transition(S.IN_TRANSACTION)

    def check_send(self, tp: TopicPartition | None) -> None:
        """Called by ``send``: raise unless a record may join the transaction; note ``tp`` as a member."""
        with self._lock:
            self._check_usable("send")
            if self._state is S.ABORTABLE_ERROR:
                raise self._abortable_error("send")
            if self._state is not S.IN_TRANSACTION:
                raise InvalidTxnStateError(
                    f"send() outside a transaction (state {self._state.value}): call begin_transaction() first"
                )
            if tp is not None and tp not in self._added and tp not in self._adding:
                self._new.add(tp)

    def check_open(self, call: str) -> None:
        """Raise unless a healthy transaction is open: the fatal or abortable error, or InvalidTxnStateError."""
        with self._lock:
            self._check_usable(call)
            if self._state is S.ABORTABLE_ERROR:
                raise self._abortable_error(call)
            if self._state is not S.IN_TRANSACTION:
                raise InvalidTxnStateError(f"{call}() without an open transaction (state {self._state.value})")

    def begin_send_offsets(self, offsets: Mapping[TopicPartition, OffsetAndMetadata], group_id: str) -> Future[None]:
        with self._lock:
            pending = self._pending(_OFFSETS)
            if pending is not None:
                return pending
            self._check_usable("send_offsets_to_transaction")
            if self._state is S.ABORTABLE_ERROR:
                raise self._abortable_error("send_offsets_to_transaction")
            if self._state is not S.IN_TRANSACTION:
                raise InvalidTxnStateError(
                    f"send_offsets_to_transaction() outside a transaction (state {self._state.value})"
                )
            result: Future[None] = Future()
            self._results[_OFFSETS] = result
            self._enqueue(AddOffsetsToTxn(result, self._txn_key, group_id, offsets))
            return result

    def begin_commit(self) -> Future[None]:
        with self._lock:
            pending = self._pending(_COMMIT)
            if pending is not None:
                return pending
            self._check_usable(_COMMIT)
            if self._state is S.ABORTABLE_ERROR:
                raise self._abortable_error("commit_transaction")
            if self._state is not S.IN_TRANSACTION:
                raise InvalidTxnStateError(f"commit_transaction() without a transaction (state {self._state.value})")
            return self._begin_end(commit=True)

    def begin_abort(self) -> Future[None]:
        with self._lock:
            pending = self._pending(_ABORT)
            if pending is not None:
                return pending
            self._check_usable(_ABORT)
            if self._state not in (S.IN_TRANSACTION, S.ABORTABLE_ERROR):
                raise InvalidTxnStateError(f"abort_transaction() without a transaction (state {self._state.value})")
            return self._begin_end(commit=False)

    def abort_on_close(self) -> bool:
        """Start aborting an open transaction as the producer closes; True if one was open."""
        with self._lock:
            if self._state not in (S.IN_TRANSACTION, S.ABORTABLE_ERROR):
                return False
            if any(not result.done() for result in self._results.values()):
                return False
            self._begin_end(commit=False)
            return True

    def _begin_end(self, commit: bool) -> Future[None]:
        result: Future[None] = Future()
        self._results[_COMMIT if commit else _ABORT] = result
        self._transition(S.COMMITTING if commit else S.ABORTING)
        if not commit:
            self._error = None
            # Partitions not yet asked for will not be: their batches are dropped.
            self._new.clear()
            self._requests = [r for r in self._requests if not self._drop_for_abort(r)]
        if self._started or self._maybe_started or self._new or self._adding:
            self._enqueue(EndTxn(result, self._txn_key, commit))
        else:
            self._end_locally(result)
        return result

    def _drop_for_abort(self, request: TxnRequest) -> bool:
        if isinstance(request, (FindCoordinator, InitProducerId, EndTxn)):
            return False
        if isinstance(request, AddPartitionsToTxn):
            self._adding -= request.partitions
        request.fail(TransactionAbortedError("the transaction was aborted"))
        return True

    def _pending(self, call: str) -> Future[None] | None:
        """The result of an earlier call still in progress (it timed out and is being retried).

        A different call while one is pending is a misuse, as in Kafka.
        """
        for name, result in list(self._results.items()):
            if result.done():
                del self._results[name]
        if not self._results:
            return None
        if call in self._results:
            return self._results[call]
        other = next(iter(self._results))
        raise InvalidTxnStateError(f"{call}() while an earlier {other}() has not finished: call {other}() again")

    def _check_usable(self, call: str) -> None:
        if self.transactional_id is None:
            raise InvalidTxnStateError(f"{call}() needs a producer with a transactional_id")
        if self._state is S.FATAL_ERROR and self._error is not None:
            raise self._error

    def _abortable_error(self, call: str) -> TransactionAbortableError:
        error = TransactionAbortableError(
            f"{call}() refused: the transaction failed and must be aborted ({self._error})"
        )
        error.__cause__ = self._error
        return error

    # --- sender thread: what to send ----------------------------------------------------------

    @property
    def _txn_key(self) -> CoordinatorKey:
        return CoordinatorKey.transaction(self.transactional_id or "")

    def next_request(self, now: float, has_incomplete_batches: bool) -> tuple[TxnRequest | None, float]:
        """The request to send now, if any, and otherwise how long until one may be due.

        One request is in flight at a time, in priority order; a request for
        a coordinator not yet known is preceded by its FindCoordinator. EndTxn
        waits until no batch is incomplete.
        """
        with self._lock:
            if self._request_in_flight is not None:
                return None, float("inf")
            if self._new and self._state in (S.IN_TRANSACTION, S.COMMITTING):
                self._adding |= self._new
                self._maybe_started = True
                self._enqueue(AddPartitionsToTxn(self._txn_key, self._new))
                self._new = set()
            while self._requests:
                request = self._requests[0]
                if self._state is S.FATAL_ERROR or (
                    self._state is S.ABORTABLE_ERROR and not isinstance(request, FindCoordinator)
                ):
                    self._requests.pop(0)
                    request.fail(self._error or TransactionAbortableError("the transaction must be aborted"))
                    continue
                if request.is_end_txn and (has_incomplete_batches or self._adding):
                    return None, float("inf")  # woken by the responses of what is still out
                if request.coordinator is not None and request.coordinator not in self._coordinators:
                    finder = self._finding.get(request.coordinator)
                    if finder is None:
                        finder = self._finding[request.coordinator] = FindCoordinator(request.coordinator)
                        finder.retry_at = request.retry_at
                        self._enqueue(finder)
                    request = self._requests[0]
                if request.retry_at > now:
                    return None, request.retry_at - now
                self._requests.pop(0)
                self._request_in_flight = request
                return request, 0.0
            return None, float("inf")

    def coordinator_address(self, request: TxnRequest) -> tuple[int, str, int] | None:
        """Node id, host and port of the request's coordinator; None: any broker will do."""
        if request.coordinator is None:
            return None
        with self._lock:
            return self._coordinators.get(request.coordinator)

    def on_response(self, request: TxnRequest, body: object, now: float, backoff: float) -> None:
        """Apply the answer to the in-flight request; ``backoff`` is the delay before a retry."""
        with self._lock:
            self._finish(request, request.on_response(self, body), now, backoff)

    def on_transport_error(self, request: TxnRequest, error: BaseException, now: float, backoff: float) -> None:
        """The in-flight request (or one that could not be sent) got no answer."""
        with self._lock:
            self._finish(request, request.on_transport_error(self, error), now, backoff)

    def _finish(self, request: TxnRequest, outcome: Outcome, now: float, backoff: float) -> None:
        if self._request_in_flight is request:
            self._request_in_flight = None
        if outcome is Outcome.DONE:
            if isinstance(request, FindCoordinator):
                self._finding.pop(request.target, None)
            return
        if self._state is S.FATAL_ERROR:
            request.fail(self._error or RuntimeError("fatal error"))
            return
        if outcome is Outcome.FIND_COORDINATOR and request.coordinator is not None:
            self._coordinators.pop(request.coordinator, None)
        request.attempts += 1
        request.retry_at = now + (CONCURRENT_TRANSACTIONS_BACKOFF if outcome is Outcome.RETRY_SOON else backoff)
        self._enqueue(request)

    @property
    def has_request_in_flight(self) -> bool:
        return self._request_in_flight is not None

    def has_pending_requests(self) -> bool:
        with self._lock:
            return bool(self._requests or self._request_in_flight or self._new)

    @property
    def is_completing(self) -> bool:
        return self._state in (S.COMMITTING, S.ABORTING)

    def should_abort_queued_batches(self) -> BaseException | None:
        """The error to fail unsent batches with while the transaction is being aborted."""
        if self._state is S.ABORTING:
            return TransactionAbortedError("the transaction was aborted before this record was sent")
        if self._state is S.ABORTABLE_ERROR:
            return self._abortable_error("send")
        return None

    def _enqueue(self, request: TxnRequest) -> None:
        if request.order is None:
            self._sequence_number += 1
            request.order = (request.priority, self._sequence_number)
        self._requests.append(request)
        self._requests.sort(key=lambda r: r.order)

    # --- sender thread: answers ---------------------------------------------------------------
    # Called by the request handlers (txn_requests.py) with the lock held.

    def set_coordinator(self, key: CoordinatorKey, node_id: int, host: str, port: int) -> None:
        self._coordinators[key] = (node_id, host, port)

    def forget_coordinator(self, key: CoordinatorKey) -> None:
        with self._lock:
            self._coordinators.pop(key, None)

    def fail_waiting_for(self, key: CoordinatorKey, error: BaseException) -> None:
        """The coordinator cannot be found for good: fail the requests that need it."""
        self._finding.pop(key, None)
        for request in [r for r in self._requests if r.coordinator == key]:
            self._requests.remove(request)
            if isinstance(request, TxnOffsetCommit | AddOffsetsToTxn):
                request.fail_abortable(self, error)
            else:
                request.fail_fatal(self, error)

    def initialized(self, producer_id: int, producer_epoch: int) -> None:
        self.set_producer_id(producer_id, producer_epoch)
        self._epoch_bump_needed = False
        self._transition(S.READY)

    @property
    def started(self) -> bool:
        """Whether the coordinator confirmed a partition or the offsets of a group in the transaction."""
        return self._started

    def partitions_added(self, partitions: set[TopicPartition]) -> None:
        if partitions:
            self._added |= partitions
            self._adding -= partitions
            self._started = True

    def partitions_not_added(self, partitions: set[TopicPartition]) -> None:
        self._adding -= partitions

    def offsets_added(self, commit: TxnOffsetCommit) -> None:
        self._started = True
        self._enqueue(commit)

    def transaction_ended(self, request: EndTxn) -> None:
        self._added.clear()
        self._adding.clear()
        self._new.clear()
        self._started = self._maybe_started = False
        if not request.commit and self._epoch_bump_needed:
            # Sequences of the aborted transaction have a gap: start over under a new epoch.
            self._transition(S.INITIALIZING)
            self._enqueue(InitProducerId(request.result, self._txn_key))
            return
        self._end_locally(request.result)

    def _end_locally(self, result: Future[None]) -> None:
        self._transition(S.READY)
        if not result.done():
            result.set_result(None)

    def abortable(self, error: BaseException) -> None:
        if self._state not in (S.IN_TRANSACTION, S.COMMITTING, S.ABORTABLE_ERROR):
            return
        self._error = error
        self._transition(S.ABORTABLE_ERROR)
        # A commit under way can no longer succeed: tell its caller now.
        for request in [r for r in self._requests if isinstance(r, EndTxn) and r.commit]:
            self._requests.remove(request)
            request.fail(self._abortable_error("commit_transaction"))
        commit = self._results.get(_COMMIT)
        if commit is not None and not commit.done():
            commit.set_exception(self._abortable_error("commit_transaction"))

    def fatal(self, error: BaseException) -> None:
        self._error = error
        self._state = S.FATAL_ERROR
        for request in self._requests:
            request.fail(error)
        self._requests.clear()
        for result in self._results.values():
            if not result.done():
                result.set_exception(error)

    @property
    def fatal_error(self) -> BaseException | None:
        return self._error if self._state is S.FATAL_ERROR else None

    # --- failed records ------------------------------------------------------------------------

    def send_failed(self, error: BaseException) -> None:
        """A record of the transaction was refused before it was queued (e.g. too large)."""
        with self._lock:
            wrapped = TransactionAbortableError(f"a record of the transaction was refused: {error}")
            wrapped.__cause__ = error
            self.abortable(wrapped)

    def batch_failed(self, batch: ProducerBatch, error: BaseException) -> BaseException | None:
        """A transactional batch failed for good; returns the fatal error if the producer must stop."""
        with self._lock:
            if batch.has_sequence and not self.is_stale(batch):
                self._epoch_bump_needed = True
            code = error.code if isinstance(error, KafkaError) else None
            if isinstance(error, ProducerFencedError) or code in (
                ErrorCode.PRODUCER_FENCED,
                ErrorCode.INVALID_PRODUCER_EPOCH,
            ):
                fatal: BaseException = (
                    error if isinstance(error, ProducerFencedError) else fenced_error(code, f"produce to {batch.topic_partition}")  # type: ignore[arg-type]
                )
                self.fatal(fatal)
                return fatal
            if code in _FATAL_PRODUCE_ERRORS:
                self.fatal(error)
                return error
            if isinstance(error, TransactionAbortedError | TransactionAbortableError):
                return None  # dropped by an abort already under way
            wrapped = TransactionAbortableError(
                f"a record for {batch.topic_partition} was not delivered, so the transaction must be aborted: {error}"
            )
            wrapped.__cause__ = error
            self.abortable(wrapped)
            return None

    # --- state machine ------------------------------------------------------------------------

    def _transition(self, target: TxnState) -> None:
        if target is not S.FATAL_ERROR and target not in TRANSITIONS[self._state]:
            raise InvalidTxnStateError(f"illegal transaction state change {self._state.value} → {target.value}")
        self._state = target
