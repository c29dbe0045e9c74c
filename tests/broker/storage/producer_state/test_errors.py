"""Producer-state refusals carry Kafka error codes (producer_state/errors.py)."""

from __future__ import annotations

from broker_core.storage.producer_state import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    UnknownProducerIdError,
)


def test_errors_carry_kafka_error_codes():
    assert OutOfOrderSequenceError.error_code == 45
    assert InvalidProducerEpochError.error_code == 47
    assert InvalidTxnStateError.error_code == 48
    assert UnknownProducerIdError.error_code == 59
    assert not OutOfOrderSequenceError.retriable
