"""Errors raised by Spate's client.

Two families:

* :class:`~spate.protocol.errors.KafkaError` (re-exported here) carries
  a Kafka error code that a broker answered with; ``exc.code.retriable`` says
  whether trying again may succeed. :class:`OffsetOutOfRangeError` and
  :class:`AdminError` are KafkaErrors with more context.
* :class:`ClientError` and its subclasses are failures on the client's side
  of the wire: a broker that cannot be reached, a deadline that passed, a
  client used after ``close()``. They carry ``retriable`` too, so retry loops
  treat both families the same way.

Transactions and groups add errors that say what the application must do
next, as Kafka's clients do:

* :class:`ProducerFencedError` (fatal): another producer took over the
  transactional id; this one can only be closed.
* :class:`TransactionAbortableError`: something in the current transaction
  failed (a record, an offset commit); ``abort_transaction`` and start over.
* :class:`InvalidTxnStateError`: the transaction API was called out of
  order (commit without begin, send outside a transaction, ...).
* :class:`CommitFailedError`: a group member's commit was refused because
  the group rebalanced; the partitions may belong to another member now.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from spate.protocol.errors import ErrorCode, KafkaError

if TYPE_CHECKING:
    from spate.structs import TopicPartition

__all__ = [
    "AdminError",
    "BrokerUnavailableError",
    "ClientClosedError",
    "ClientError",
    "CommitFailedError",
    "ErrorCode",
    "InvalidTxnStateError",
    "KafkaError",
    "KafkaTimeoutError",
    "NetworkError",
    "NoOffsetForPartitionError",
    "OffsetOutOfRangeError",
    "ProducerFencedError",
    "TransactionAbortableError",
    "TransactionAbortedError",
    "UnsupportedApiError",
    "is_retriable",
]


class ClientError(Exception):
    """A failure on the client's side: nothing the broker answered."""

    retriable: bool = False


class KafkaTimeoutError(ClientError):
    """An operation did not finish before its deadline.

    Raised for a request the broker did not answer within
    ``request_timeout_ms`` and for a whole operation (with its retries) that
    outlived its timeout; the last underlying failure, if any, is the
    exception's ``__cause__`` and part of its message.
    """

    retriable = True


class NetworkError(ClientError):
    """A connection failed or was lost with requests in flight; retrying may succeed."""

    retriable = True

    def __init__(self, message: str, address: str | None = None) -> None:
        super().__init__(message)
        self.address = address


class BrokerUnavailableError(NetworkError):
    """No connection could be made to a broker (refused, unreachable, or connect timeout)."""


class UnsupportedApiError(ClientError):
    """The broker serves no version of an API that this client speaks."""


class ClientClosedError(ClientError):
    """The producer, consumer or admin client was used after ``close()``."""


class NoOffsetForPartitionError(ClientError):
    """An assigned partition has no position and ``auto_offset_reset`` is ``"none"``: seek first."""

    def __init__(self, topic_partition: TopicPartition) -> None:
        super().__init__(f"{topic_partition} has no position and auto_offset_reset is 'none'; call seek() first")
        self.topic_partition = topic_partition


class OffsetOutOfRangeError(KafkaError):
    """A fetch position lies outside the partition's log and ``auto_offset_reset`` is ``"none"``."""

    def __init__(
        self,
        topic_partition: TopicPartition,
        offset: int,
        log_start_offset: int = -1,
        high_watermark: int = -1,
    ) -> None:
        self.topic_partition = topic_partition
        self.offset = offset
        self.log_start_offset = log_start_offset
        self.high_watermark = high_watermark
        span = (
            f"the log holds [{log_start_offset}, {high_watermark})"
            if log_start_offset >= 0 and high_watermark >= 0
            else "the broker did not say which offsets the log holds"
        )
        super().__init__(
            ErrorCode.OFFSET_OUT_OF_RANGE,
            f"fetch offset {offset} is out of range for {topic_partition}: {span}",
        )


class AdminError(KafkaError):
    """An admin request failed for some of its resources.

    ``errors`` maps each failed resource (a topic name, a
    :class:`TopicPartition` or a config resource) to its own KafkaError; the
    exception's ``code`` is that of the first failure, so a caller asking
    about one resource can simply check ``exc.code``. Resources missing from
    ``errors`` succeeded.
    """

    def __init__(self, operation: str, errors: Mapping[Any, KafkaError]) -> None:
        if not errors:
            raise ValueError("an AdminError needs at least one failed resource")
        self.operation = operation
        self.errors = dict(errors)
        first = next(iter(self.errors.values()))
        detail = "; ".join(f"{resource}: {error}" for resource, error in self.errors.items())
        super().__init__(first.code, f"{operation} failed for {len(self.errors)} resource(s): {detail}")


class ProducerFencedError(KafkaError):
    """A newer producer with the same transactional id fenced this one.

    The coordinator or a partition answered PRODUCER_FENCED (or, to older
    request versions, INVALID_PRODUCER_EPOCH). Fatal: every later call
    raises it; the producer can only be closed.
    """

    def __init__(self, message: str, code: ErrorCode = ErrorCode.PRODUCER_FENCED) -> None:
        super().__init__(code, message)

    @classmethod
    def taken_over(cls, code: ErrorCode, what: str) -> ProducerFencedError:
        """``what`` was refused (with ``code``) because a producer with a newer epoch took the id over."""
        return cls(f"{what}: another producer with the same transactional id has taken over (its epoch is newer)", code)

    @property
    def retriable(self) -> bool:
        return False


class InvalidTxnStateError(KafkaError):
    """The transaction API used out of order, or the coordinator answered INVALID_TXN_STATE."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_TXN_STATE, message)


class TransactionAbortableError(ClientError):
    """The current transaction cannot commit: a send or an offset commit in it failed.

    The failure is the exception's ``__cause__``. Call ``abort_transaction``;
    the producer can then begin a new transaction.
    """


class TransactionAbortedError(ClientError):
    """A record was dropped unsent because its transaction was aborted."""


class CommitFailedError(KafkaError):
    """A group member's offset commit was refused: the group rebalanced since it joined.

    ``code`` is the coordinator's answer (REBALANCE_IN_PROGRESS,
    ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID). The consumer
    rejoins on its next poll; records processed since the last commit may be
    delivered again to whichever member gets their partitions.
    """

    @property
    def retriable(self) -> bool:
        return False


def is_retriable(exc: BaseException) -> bool:
    """Whether retrying the operation that raised ``exc`` may succeed."""
    if isinstance(exc, KafkaError):
        return exc.retriable
    if isinstance(exc, ClientError):
        return exc.retriable
    return False
