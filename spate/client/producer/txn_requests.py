"""The requests a transactional producer sends to coordinators, and what each answer means.

Each request is a small handler: ``body`` builds the request from the
transaction's state when it is sent (so a retry carries the current
producer epoch), and ``on_response`` reads the answer, reports it to the
transaction (:class:`TransactionState`, the producer's transaction manager
or a transaction handed over from another process) and says what happens
next (:class:`Outcome`). What only the runner of the handlers keeps is left
on the handler for it to collect: the address a FindCoordinator found, and
the request that follows an accepted one (``follow_up``). The request queue
(``txn_request_queue.py``) sends one handler at a time, in priority order:

    FindCoordinator (0) < InitProducerId (1) < AddPartitionsToTxn, AddOffsetsToTxn,
    TxnOffsetCommit (2) < EndTxn (3)

Errors fall in three kinds, as in Kafka's producer: retriable (the
coordinator moved or is loading, CONCURRENT_TRANSACTIONS: send again),
abortable (this transaction cannot commit, the producer can abort and go on)
and fatal (fenced, or the coordinator refuses the producer: only ``close``
is left). The transaction applies the last two (``abortable``/``fatal``).
"""

from __future__ import annotations

import enum
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Protocol

from spate.client.commit_offsets import committed_partitions, partition_error_codes
from spate.client.errors import (
    ClientError,
    InvalidTxnStateError,
    ProducerFencedError,
    TransactionAbortableError,
    is_retriable,
)
from spate.client.net.find_coordinator import CoordinatorKey
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from spate.protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest
from spate.protocol.messages.end_txn import EndTxnRequest
from spate.protocol.messages.find_coordinator import FindCoordinatorRequest
from spate.protocol.messages.init_producer_id import InitProducerIdRequest
from spate.protocol.messages.txn_offset_commit import TxnOffsetCommitRequest
from spate.structs import OffsetAndMetadata, TopicPartition, group_by_topic

if TYPE_CHECKING:
    from spate.client.producer.transaction_manager import TransactionManager

E = ErrorCode

# Kafka's producer retries AddPartitionsToTxn this soon after CONCURRENT_TRANSACTIONS:
# the previous transaction's markers are usually written within milliseconds.
CONCURRENT_TRANSACTIONS_BACKOFF = 0.02

_COORDINATOR_MOVED = frozenset({E.NOT_COORDINATOR, E.COORDINATOR_NOT_AVAILABLE})
_FENCED = frozenset({E.PRODUCER_FENCED, E.INVALID_PRODUCER_EPOCH})
# Answers after which the producer cannot go on, whatever request drew them.
_FATAL = frozenset(
    {
        E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        E.CLUSTER_AUTHORIZATION_FAILED,
        E.INVALID_PRODUCER_ID_MAPPING,
        E.INVALID_TXN_STATE,
        E.TRANSACTION_COORDINATOR_FENCED,
        E.UNSUPPORTED_VERSION,
        E.INVALID_TRANSACTION_TIMEOUT,
        E.UNSUPPORTED_FOR_MESSAGE_FORMAT,
    }
)


class Outcome(enum.Enum):
    DONE = "done"  # finished; the handler's result is set (success or failure)
    RETRY = "retry"  # send again after the retry backoff
    RETRY_SOON = "retry soon"  # CONCURRENT_TRANSACTIONS: the coordinator is finishing the last transaction
    FIND_COORDINATOR = "find coordinator"  # the coordinator moved: look it up, then send again


class TransactionState(Protocol):
    """What every handler reads and reports; the producer's own handlers need its whole TransactionManager."""

    transactional_id: str | None
    producer_id: int
    producer_epoch: int

    def offsets_added(self) -> None: ...

    def abortable(self, error: BaseException) -> None: ...

    def fatal(self, error: BaseException) -> None: ...


class TxnRequest:
    """One request to a coordinator; ``result`` is what the application waits on, if anything."""

    api_key: ClassVar[ApiKey]
    priority: ClassVar[int]
    min_version: ClassVar[int | None] = None
    # A refusal or an unanswerable request ends the producer, not just the transaction.
    failure_is_fatal: ClassVar[bool] = False

    def __init__(self, result: Future[None] | None, coordinator: CoordinatorKey | None) -> None:
        self.result: Future[None] = result if result is not None else Future()
        self.coordinator = coordinator
        self.retry_at = 0.0
        self.attempts = 0
        # (priority, arrival): set when first queued, kept across retries.
        self.order: tuple[int, int] | None = None
        # The request that goes next once this one is done (set by an accepted AddOffsetsToTxn).
        self.follow_up: TxnRequest | None = None

    @property
    def is_end_txn(self) -> bool:
        return False

    def body(self, txn: TransactionState) -> Any:
        raise NotImplementedError

    def on_response(self, txn: TransactionState, body: Any) -> Outcome:
        raise NotImplementedError

    def on_transport_error(self, txn: TransactionState, error: BaseException) -> Outcome:
        """The request got no answer (lost connection, timeout) or could not be sent."""
        if is_retriable(error):
            return Outcome.FIND_COORDINATOR if self.coordinator is not None else Outcome.RETRY
        self.fail_request(txn, error)
        return Outcome.DONE

    # --- shared answers -----------------------------------------------------------------------

    def common(self, txn: TransactionState, code: ErrorCode, what: str) -> Outcome | None:
        """The outcome for answers every coordinator request treats alike; None for the rest."""
        if code in _COORDINATOR_MOVED:
            return Outcome.FIND_COORDINATOR
        if code == E.COORDINATOR_LOAD_IN_PROGRESS:
            return Outcome.RETRY
        if code == E.CONCURRENT_TRANSACTIONS:
            return Outcome.RETRY_SOON
        if code in _FENCED:
            self.fail_fatal(txn, ProducerFencedError.taken_over(code, what))
            return Outcome.DONE
        if code in _FATAL:
            error: KafkaError = InvalidTxnStateError(what) if code == E.INVALID_TXN_STATE else KafkaError(code, what)
            self.fail_fatal(txn, error)
            return Outcome.DONE
        return None

    def refused(self, txn: TransactionState, code: ErrorCode, what: str) -> Outcome:
        """The outcome of an error code in a single-code answer: a shared one's, else this request fails."""
        outcome = self.common(txn, code, what)
        if outcome is None:
            self.fail_request(txn, KafkaError(code, what))
            outcome = Outcome.DONE
        return outcome

    def fail_request(self, txn: TransactionState, error: BaseException) -> None:
        if self.failure_is_fatal:
            self.fail_fatal(txn, error)
        else:
            self.fail_abortable(txn, error)

    def succeed(self) -> None:
        if not self.result.done():
            self.result.set_result(None)

    def fail(self, error: BaseException) -> None:
        if not self.result.done():
            self.result.set_exception(error)

    def fail_fatal(self, txn: TransactionState, error: BaseException) -> None:
        txn.fatal(error)
        self.fail(error)

    def fail_abortable(self, txn: TransactionState, error: BaseException) -> None:
        abortable = TransactionAbortableError(f"the transaction must be aborted: {error}")
        abortable.__cause__ = error
        txn.abortable(abortable)
        self.fail(abortable)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} attempt {self.attempts + 1}>"


class FindCoordinator(TxnRequest):
    api_key = ApiKey.FIND_COORDINATOR
    priority = 0
    min_version = 1  # key_type arrived in v1

    def __init__(self, target: CoordinatorKey) -> None:
        super().__init__(None, None)
        self.target = target
        # Node id, host and port of the coordinator once found. When the lookup fails for good the
        # result holds the error, for the runner to fail the requests that were waiting for it.
        self.address: tuple[int, str, int] | None = None

    def body(self, txn: TransactionState) -> Any:
        return FindCoordinatorRequest(key=self.target.key, key_type=self.target.key_type)

    def on_response(self, txn: TransactionState, body: Any) -> Outcome:
        code = ErrorCode.of(body.error_code)
        if code == E.NONE:
            self.address = (body.node_id, body.host, body.port)
            self.succeed()
            return Outcome.DONE
        if code.retriable:
            return Outcome.RETRY
        error = KafkaError(code, body.error_message or f"find the {self.target}")
        if code in (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, E.CLUSTER_AUTHORIZATION_FAILED):
            self.fail_fatal(txn, error)
        else:
            self.fail(error)
        return Outcome.DONE

    def on_transport_error(self, txn: TransactionState, error: BaseException) -> Outcome:
        if is_retriable(error):
            return Outcome.RETRY
        self.fail(error)
        return Outcome.DONE


class InitProducerId(TxnRequest):
    api_key = ApiKey.INIT_PRODUCER_ID
    priority = 1
    failure_is_fatal = True

    def body(self, txn: TransactionManager) -> Any:
        return InitProducerIdRequest(
            transactional_id=txn.transactional_id, transaction_timeout_ms=txn.transaction_timeout_ms
        )

    def on_response(self, txn: TransactionManager, body: Any) -> Outcome:
        code = ErrorCode.of(body.error_code)
        if code == E.NONE:
            txn.initialized(body.producer_id, body.producer_epoch)
            self.succeed()
            return Outcome.DONE
        return self.refused(txn, code, "InitProducerId")


class AddPartitionsToTxn(TxnRequest):
    api_key = ApiKey.ADD_PARTITIONS_TO_TXN
    priority = 2

    def __init__(self, coordinator: CoordinatorKey, partitions: set[TopicPartition]) -> None:
        super().__init__(None, coordinator)
        self.partitions = set(partitions)

    def body(self, txn: TransactionState) -> Any:
        by_topic = group_by_topic(sorted(self.partitions), value=lambda tp: tp.partition)
        return AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=txn.transactional_id,
            v3_and_below_producer_id=txn.producer_id,
            v3_and_below_producer_epoch=txn.producer_epoch,
            v3_and_below_topics=[
                AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name=name, partitions=numbers)
                for name, numbers in by_topic.items()
            ],
        )

    def on_response(self, txn: TransactionManager, body: Any) -> Outcome:
        codes = {
            TopicPartition(topic.name, part.partition_index): ErrorCode.of(part.partition_error_code)
            for topic in body.results_by_topic_v3_and_below
            for part in topic.results_by_partition
        }
        added = {tp for tp in self.partitions if codes.get(tp) == E.NONE}
        txn.partitions_added(added)
        self.partitions -= added
        if not self.partitions:
            self.succeed()
            return Outcome.DONE
        failures = {tp: codes.get(tp, E.UNKNOWN_SERVER_ERROR) for tp in self.partitions}
        # The worst answer decides: fatal, then abortable, then retry.
        for code in failures.values():
            outcome = self.common(txn, code, f"AddPartitionsToTxn {sorted(self.partitions)}")
            if outcome is Outcome.DONE:
                txn.partitions_not_added(self.partitions)
                return outcome
        refused = {tp: code for tp, code in failures.items() if not _add_partition_retriable(code)}
        if refused:
            detail = ", ".join(f"{tp}: {code.name}" for tp, code in sorted(refused.items()))
            self.fail_abortable(txn, KafkaError(next(iter(refused.values())), f"AddPartitionsToTxn: {detail}"))
            txn.partitions_not_added(self.partitions)
            return Outcome.DONE
        if any(code in _COORDINATOR_MOVED for code in failures.values()):
            return Outcome.FIND_COORDINATOR
        if any(code == E.CONCURRENT_TRANSACTIONS for code in failures.values()):
            return Outcome.RETRY_SOON
        return Outcome.RETRY

    def on_transport_error(self, txn: TransactionManager, error: BaseException) -> Outcome:
        outcome = super().on_transport_error(txn, error)
        if outcome is Outcome.DONE:
            txn.partitions_not_added(self.partitions)
        return outcome


def _add_partition_retriable(code: ErrorCode) -> bool:
    # OPERATION_NOT_ATTEMPTED: refused only because another partition of the request was.
    return code.retriable or code in (E.OPERATION_NOT_ATTEMPTED, E.UNKNOWN_TOPIC_OR_PARTITION)


class _GroupOffsetsRequest(TxnRequest):
    """A request about a group's offsets; one result covers AddOffsetsToTxn and the TxnOffsetCommit after it."""

    priority = 2

    def __init__(
        self,
        result: Future[None],
        coordinator: CoordinatorKey,
        group_id: str,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
    ) -> None:
        super().__init__(result, coordinator)
        self.group_id = group_id
        self.offsets = dict(offsets)


class AddOffsetsToTxn(_GroupOffsetsRequest):
    api_key = ApiKey.ADD_OFFSETS_TO_TXN

    def body(self, txn: TransactionState) -> Any:
        return AddOffsetsToTxnRequest(
            transactional_id=txn.transactional_id,
            producer_id=txn.producer_id,
            producer_epoch=txn.producer_epoch,
            group_id=self.group_id,
        )

    def on_response(self, txn: TransactionState, body: Any) -> Outcome:
        code = ErrorCode.of(body.error_code)
        if code == E.NONE:
            # The offsets themselves go to the group's coordinator, under the same result.
            txn.offsets_added()
            self.follow_up = TxnOffsetCommit(self.result, CoordinatorKey.group(self.group_id), self.group_id, self.offsets)
            return Outcome.DONE
        return self.refused(txn, code, f"AddOffsetsToTxn for group {self.group_id!r}")


class TxnOffsetCommit(_GroupOffsetsRequest):
    """``offsets`` keeps the partitions the coordinator has not accepted yet."""

    api_key = ApiKey.TXN_OFFSET_COMMIT

    def body(self, txn: TransactionState) -> Any:
        by_topic = committed_partitions(self.offsets, TxnOffsetCommitRequest.TxnOffsetCommitRequestPartition)
        return TxnOffsetCommitRequest(
            transactional_id=txn.transactional_id,
            group_id=self.group_id,
            producer_id=txn.producer_id,
            producer_epoch=txn.producer_epoch,
            topics=[
                TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic(name=name, partitions=parts)
                for name, parts in by_topic.items()
            ],
        )

    def on_response(self, txn: TransactionState, body: Any) -> Outcome:
        codes = partition_error_codes(body)
        for tp in [tp for tp in self.offsets if codes.get(tp) == E.NONE]:
            del self.offsets[tp]
        if not self.offsets:
            self.succeed()
            return Outcome.DONE
        what = f"TxnOffsetCommit for group {self.group_id!r}"
        failures = [codes.get(tp, E.UNKNOWN_SERVER_ERROR) for tp in self.offsets]
        for code in failures:
            if code in _FENCED:
                self.fail_fatal(txn, ProducerFencedError.taken_over(code, what))
                return Outcome.DONE
        for code in failures:
            if not (code.retriable or code == E.UNKNOWN_TOPIC_OR_PARTITION):
                self.fail_abortable(txn, KafkaError(code, what))
                return Outcome.DONE
        if any(code in _COORDINATOR_MOVED or code == E.REQUEST_TIMED_OUT for code in failures):
            return Outcome.FIND_COORDINATOR
        return Outcome.RETRY

    def on_transport_error(self, txn: TransactionState, error: BaseException) -> Outcome:
        if isinstance(error, ClientError) and not error.retriable:
            # E.g. a broker that does not serve TxnOffsetCommit at all.
            self.fail_abortable(txn, error)
            return Outcome.DONE
        return super().on_transport_error(txn, error)


class EndTxn(TxnRequest):
    api_key = ApiKey.END_TXN
    priority = 3
    failure_is_fatal = True

    def __init__(self, result: Future[None], coordinator: CoordinatorKey, commit: bool) -> None:
        super().__init__(result, coordinator)
        self.commit = commit

    @property
    def is_end_txn(self) -> bool:
        return True

    def body(self, txn: TransactionManager) -> Any:
        return EndTxnRequest(
            transactional_id=txn.transactional_id,
            producer_id=txn.producer_id,
            producer_epoch=txn.producer_epoch,
            committed=self.commit,
        )

    def on_response(self, txn: TransactionManager, body: Any) -> Outcome:
        code = ErrorCode.of(body.error_code)
        # An abort of a transaction the coordinator never confirmed (an add whose
        # answer was lost) may find nothing to abort: that is what was wanted.
        if code == E.NONE or (code == E.INVALID_TXN_STATE and not self.commit and not txn.started):
            txn.transaction_ended(self.commit, self.result)
            return Outcome.DONE
        return self.refused(txn, code, "EndTxn " + ("commit" if self.commit else "abort"))
