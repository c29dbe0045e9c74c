"""A transactional producer's state machine, on top of the idempotence bookkeeping.

With a transactional id the producer's id and epoch come from the
transaction coordinator, and the manager runs Kafka's producer-side state
machine (:data:`TRANSITIONS`)::

    UNINITIALIZED → INITIALIZING → READY ⇄ IN_TRANSACTION → COMMITTING → READY
                                             ↓      ↘ ABORTABLE_ERROR ↘
                                             ABORTING → READY (or INITIALIZING: new epoch)
    any state → FATAL_ERROR (fenced, or refused by the coordinator)

A partition joins the transaction (AddPartitionsToTxn) before its first
batch is sent: ``send`` notes new partitions, the sender asks for all of
them in one request, and :meth:`TransactionManager.can_send` holds their
batches back until the coordinator has answered. EndTxn waits until no batch
is incomplete. A numbered batch that fails inside a transaction makes the
transaction abortable; after the abort the producer re-initializes to get a
new epoch, since its sequences have a gap.

The manager answers questions and takes state transitions; it sends
nothing. What the transaction needs from its coordinators next is recorded
as plain data (:data:`TxnNeed`); the request queue
(``txn_request_queue.py``) takes those needs, turns them into request
handlers (``txn_requests.py``) and runs them, and the handlers report the
answers back here.

Threads: the application calls the ``begin_*`` and ``check_*`` methods, the
sender thread everything else; transactional state is guarded by
:attr:`TransactionManager.lock` (taken after the producer's lock, never
before it). The methods under "answers" are called with that lock held, by
the request queue while it runs a handler. The idempotence bookkeeping
(sequences, in-flight counts) belongs to the sender thread alone.
"""

from __future__ import annotations

import enum
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Mapping

from spate.client.errors import (
    InvalidTxnStateError,
    ProducerFencedError,
    TransactionAbortableError,
    TransactionAbortedError,
)
from spate.client.producer.batch import ProducerBatch
from spate.client.producer.idempotence import IdempotenceState
from spate.protocol import ErrorCode, KafkaError
from spate.structs import OffsetAndMetadata, TopicPartition

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


# --- what the transaction needs from its coordinators ---------------------------------------------


@dataclass(frozen=True, slots=True)
class InitNeeded:
    """An id and epoch (InitProducerId): the first, or a new epoch after an abort left a sequence gap."""

    result: Future[None]


@dataclass(frozen=True, slots=True)
class OffsetsNeeded:
    """A group's offsets in the transaction (AddOffsetsToTxn, then TxnOffsetCommit)."""

    result: Future[None]
    group_id: str
    offsets: Mapping[TopicPartition, OffsetAndMetadata]


@dataclass(frozen=True, slots=True)
class EndNeeded:
    """The end of the transaction (EndTxn), committed or aborted."""

    result: Future[None]
    commit: bool


TxnNeed = InitNeeded | OffsetsNeeded | EndNeeded


class TransactionManager(IdempotenceState):
    def __init__(self, transactional_id: str | None = None, transaction_timeout_ms: int = 60_000) -> None:
        if transactional_id is not None and not transactional_id:
            raise ValueError("transactional_id must not be empty")
        if transaction_timeout_ms <= 0:
            raise ValueError(f"transaction_timeout_ms must be positive, not {transaction_timeout_ms}")
        super().__init__()
        self.transactional_id = transactional_id
        self.transaction_timeout_ms = transaction_timeout_ms
        self.lock = threading.Lock()
        self._state = S.UNINITIALIZED
        self._error: BaseException | None = None
        # Partitions of the current transaction: added, being added, and not asked for yet.
        self._added: set[TopicPartition] = set()
        self._adding: set[TopicPartition] = set()
        self._new: set[TopicPartition] = set()
        self._started = False  # the coordinator confirmed a partition or offsets in the transaction
        self._maybe_started = False  # an add was sent; its answer may have been lost
        self._epoch_bump_needed = False
        self._needs: list[TxnNeed] = []
        self._results: dict[str, Future[None]] = {}

    def can_send(self, batch: ProducerBatch) -> bool:
        """As for any idempotent producer; in a transaction, only partitions the coordinator has added.

        (The added set is read without the lock: it grows only on the sender
        thread, the caller, and is cleared by ``begin_transaction`` only when
        no batch is left.)
        """
        if self.transactional_id is not None and batch.topic_partition not in self._added:
            return False
        return super().can_send(batch)

    # --- application calls ------------------------------------------------------------------------

    @property
    def state(self) -> TxnState:
        return self._state

    def begin_init(self) -> Future[None]:
        with self.lock:
            pending = self._pending(_INIT)
            if pending is not None:
                return pending
            self._check_usable(_INIT)
            if self._state is not S.UNINITIALIZED:
                raise InvalidTxnStateError("init_transactions() was already called on this producer")
            self._transition(S.INITIALIZING)
            result = self._new_result(_INIT)
            self._needs.append(InitNeeded(result))
            return result

    def begin_transaction(self) -> None:
        with self.lock:
            self._check_usable("begin_transaction")
            if self._state is S.UNINITIALIZED:
                raise InvalidTxnStateError("call init_transactions() before begin_transaction()")
            if self._state is not S.READY:
                raise InvalidTxnStateError(f"begin_transaction() while the producer is in state {self._state.value}")
            self._forget_partitions()
            self._transition(S.IN_TRANSACTION)

    def check_send(self, tp: TopicPartition | None) -> None:
        """Called by ``send``: raise unless a record may join the transaction; note ``tp`` as a member."""
        with self.lock:
            self._check_in_transaction("send", ": call begin_transaction() first")
            if tp is not None and tp not in self._added and tp not in self._adding:
                self._new.add(tp)

    def check_open(self, call: str) -> None:
        """Raise unless a healthy transaction is open: the fatal or abortable error, or InvalidTxnStateError."""
        with self.lock:
            self._check_usable(call)
            if self._state is S.ABORTABLE_ERROR:
                raise self._abortable_error(call)
            if self._state is not S.IN_TRANSACTION:
                raise InvalidTxnStateError(f"{call}() without an open transaction (state {self._state.value})")

    def begin_send_offsets(self, offsets: Mapping[TopicPartition, OffsetAndMetadata], group_id: str) -> Future[None]:
        with self.lock:
            pending = self._pending(_OFFSETS)
            if pending is not None:
                return pending
            self._check_in_transaction("send_offsets_to_transaction")
            result = self._new_result(_OFFSETS)
            self._needs.append(OffsetsNeeded(result, group_id, dict(offsets)))
            return result

    def begin_commit(self) -> Future[None]:
        with self.lock:
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
        with self.lock:
            pending = self._pending(_ABORT)
            if pending is not None:
                return pending
            self._check_usable(_ABORT)
            if self._state not in (S.IN_TRANSACTION, S.ABORTABLE_ERROR):
                raise InvalidTxnStateError(f"abort_transaction() without a transaction (state {self._state.value})")
            return self._begin_end(commit=False)

    def abort_on_close(self) -> bool:
        """Start aborting an open transaction as the producer closes; True if one was open."""
        with self.lock:
            if self._state not in (S.IN_TRANSACTION, S.ABORTABLE_ERROR):
                return False
            if any(not result.done() for result in self._results.values()):
                return False
            self._begin_end(commit=False)
            return True

    def _begin_end(self, commit: bool) -> Future[None]:
        result = self._new_result(_COMMIT if commit else _ABORT)
        self._transition(S.COMMITTING if commit else S.ABORTING)
        if not commit:
            self._error = None
            # Partitions not yet asked for will not be: their batches are dropped. So are
            # offsets not yet asked for; requests already queued are the queue's to drop.
            self._new.clear()
            for need in [n for n in self._needs if isinstance(n, OffsetsNeeded)]:
                self._needs.remove(need)
                _fail(need.result, TransactionAbortedError("the transaction was aborted"))
        if self._started or self._maybe_started or self._new or self._adding:
            self._needs.append(EndNeeded(result, commit))
        else:
            self._end_locally(result)
        return result

    def _new_result(self, call: str) -> Future[None]:
        result: Future[None] = Future()
        self._results[call] = result
        return result

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

    def _check_in_transaction(self, call: str, hint: str = "") -> None:
        self._check_usable(call)
        if self._state is S.ABORTABLE_ERROR:
            raise self._abortable_error(call)
        if self._state is not S.IN_TRANSACTION:
            raise InvalidTxnStateError(f"{call}() outside a transaction (state {self._state.value}){hint}")

    def _abortable_error(self, call: str) -> TransactionAbortableError:
        error = TransactionAbortableError(
            f"{call}() refused: the transaction failed and must be aborted ({self._error})"
        )
        error.__cause__ = self._error
        return error

    # --- sender thread: what is needed --------------------------------------------------------
    # Called by the request queue with the lock held.

    def take_needs(self) -> list[TxnNeed]:
        """What the application asked for since the last call, oldest first."""
        needs, self._needs = self._needs, []
        return needs

    def take_new_partitions(self) -> frozenset[TopicPartition]:
        """Partitions sent to since the last call, from now on being added (while the transaction may grow)."""
        if not self._new or self._state not in (S.IN_TRANSACTION, S.COMMITTING):
            return frozenset()
        self._adding |= self._new
        self._maybe_started = True
        new, self._new = frozenset(self._new), set()
        return new

    def has_needs(self) -> bool:
        return bool(self._needs or self._new)

    @property
    def is_adding_partitions(self) -> bool:
        """An AddPartitionsToTxn is unanswered: EndTxn must wait for it."""
        return bool(self._adding)

    @property
    def failure(self) -> BaseException | None:
        """What queued requests fail with: the fatal error, or the abortable one; None while healthy."""
        if self._state is S.FATAL_ERROR:
            return self._error
        if self._state is S.ABORTABLE_ERROR:
            return self._error or TransactionAbortableError("the transaction must be aborted")
        return None

    @property
    def fatal_error(self) -> BaseException | None:
        return self._error if self._state is S.FATAL_ERROR else None

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

    # --- sender thread: answers ---------------------------------------------------------------
    # Called by the request handlers (txn_requests.py) with the lock held.

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

    def offsets_added(self) -> None:
        self._started = True

    def transaction_ended(self, commit: bool, result: Future[None]) -> None:
        self._forget_partitions()
        if not commit and self._epoch_bump_needed:
            # Sequences of the aborted transaction have a gap: start over under a new epoch.
            self._transition(S.INITIALIZING)
            self._needs.append(InitNeeded(result))
            return
        self._end_locally(result)

    def _forget_partitions(self) -> None:
        self._added.clear()
        self._adding.clear()
        self._new.clear()
        self._started = self._maybe_started = False

    def _end_locally(self, result: Future[None]) -> None:
        self._transition(S.READY)
        if not result.done():
            result.set_result(None)

    def abortable(self, error: BaseException) -> None:
        if self._state not in (S.IN_TRANSACTION, S.COMMITTING, S.ABORTABLE_ERROR):
            return
        self._error = error
        self._transition(S.ABORTABLE_ERROR)
        # A commit under way can no longer succeed: tell its caller now. (A commit already
        # queued as a request is dropped by the queue.)
        for need in [n for n in self._needs if isinstance(n, EndNeeded) and n.commit]:
            self._needs.remove(need)
            _fail(need.result, self._abortable_error("commit_transaction"))
        commit = self._results.get(_COMMIT)
        if commit is not None and not commit.done():
            commit.set_exception(self._abortable_error("commit_transaction"))

    def fatal(self, error: BaseException) -> None:
        """Stop for good; every pending call fails with ``error`` (queued requests are the queue's to fail)."""
        self._error = error
        self._state = S.FATAL_ERROR
        for need in self._needs:
            _fail(need.result, error)
        self._needs.clear()
        for result in self._results.values():
            _fail(result, error)

    # --- failed records ------------------------------------------------------------------------

    def send_failed(self, error: BaseException) -> None:
        """A record of the transaction was refused before it was queued (e.g. too large)."""
        with self.lock:
            wrapped = TransactionAbortableError(f"a record of the transaction was refused: {error}")
            wrapped.__cause__ = error
            self.abortable(wrapped)

    def batch_failed(self, batch: ProducerBatch, error: BaseException) -> BaseException | None:
        """A transactional batch failed for good; returns the fatal error if the producer must stop."""
        with self.lock:
            if batch.has_sequence and not self.is_stale(batch):
                self._epoch_bump_needed = True
            code = error.code if isinstance(error, KafkaError) else None
            if isinstance(error, ProducerFencedError) or code in (
                ErrorCode.PRODUCER_FENCED,
                ErrorCode.INVALID_PRODUCER_EPOCH,
            ):
                fatal: BaseException = (
                    error
                    if isinstance(error, ProducerFencedError)
                    else ProducerFencedError.taken_over(code, f"produce to {batch.topic_partition}")  # type: ignore[arg-type]
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


def _fail(result: Future[None], error: BaseException) -> None:
    if not result.done():
        result.set_exception(error)
