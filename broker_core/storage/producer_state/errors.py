"""Refusals of producer-state validation, each with Kafka's error code, and a corrupt snapshot."""

from __future__ import annotations

from typing import ClassVar


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
