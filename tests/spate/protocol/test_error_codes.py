"""Kafka error codes: numbers, names and retriability as Kafka defines them."""

from __future__ import annotations

import pytest

from spate.protocol import ErrorCode, KafkaError

# The codes PROTOCOL.md lists, and a few more that coordinators rely on.
KAFKA_NUMBERS = {
    "NONE": 0, "OFFSET_OUT_OF_RANGE": 1, "CORRUPT_MESSAGE": 2, "UNKNOWN_TOPIC_OR_PARTITION": 3,
    "INVALID_FETCH_SIZE": 4, "LEADER_NOT_AVAILABLE": 5, "NOT_LEADER_OR_FOLLOWER": 6, "REQUEST_TIMED_OUT": 7,
    "MESSAGE_TOO_LARGE": 10, "COORDINATOR_LOAD_IN_PROGRESS": 14, "COORDINATOR_NOT_AVAILABLE": 15,
    "NOT_COORDINATOR": 16, "INVALID_TOPIC_EXCEPTION": 17, "RECORD_LIST_TOO_LARGE": 18, "NOT_ENOUGH_REPLICAS": 19,
    "NOT_ENOUGH_REPLICAS_AFTER_APPEND": 20, "INVALID_REQUIRED_ACKS": 21, "ILLEGAL_GENERATION": 22,
    "UNKNOWN_MEMBER_ID": 25, "REBALANCE_IN_PROGRESS": 27, "UNSUPPORTED_VERSION": 35, "TOPIC_ALREADY_EXISTS": 36,
    "INVALID_PARTITIONS": 37, "INVALID_CONFIG": 40, "INVALID_REQUEST": 42, "POLICY_VIOLATION": 44,
    "OUT_OF_ORDER_SEQUENCE_NUMBER": 45, "DUPLICATE_SEQUENCE_NUMBER": 46, "INVALID_PRODUCER_EPOCH": 47,
    "INVALID_TXN_STATE": 48, "INVALID_PRODUCER_ID_MAPPING": 49, "INVALID_TRANSACTION_TIMEOUT": 50,
    "CONCURRENT_TRANSACTIONS": 51, "UNKNOWN_PRODUCER_ID": 59, "GROUP_ID_NOT_FOUND": 69,
    "TOPIC_DELETION_DISABLED": 73, "FENCED_LEADER_EPOCH": 74, "MEMBER_ID_REQUIRED": 79, "FENCED_INSTANCE_ID": 82,
    "INVALID_RECORD": 87, "PRODUCER_FENCED": 90,
}  # fmt: skip


@pytest.mark.parametrize(("name", "number"), KAFKA_NUMBERS.items())
def test_error_code_has_kafkas_number(name: str, number: int) -> None:
    assert ErrorCode[name] == number


@pytest.mark.parametrize(
    "code",
    [ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR,
     ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.REQUEST_TIMED_OUT, ErrorCode.NOT_ENOUGH_REPLICAS,
     ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.FENCED_LEADER_EPOCH],
)  # fmt: skip
def test_transient_conditions_are_retriable(code: ErrorCode) -> None:
    assert code.retriable


@pytest.mark.parametrize(
    "code",
    [ErrorCode.NONE, ErrorCode.OFFSET_OUT_OF_RANGE, ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.INVALID_PRODUCER_EPOCH,
     ErrorCode.UNSUPPORTED_VERSION, ErrorCode.TOPIC_ALREADY_EXISTS, ErrorCode.INVALID_REQUEST,
     ErrorCode.FENCED_INSTANCE_ID],
)  # fmt: skip
def test_permanent_conditions_are_not_retriable(code: ErrorCode) -> None:
    assert not code.retriable


def test_kafka_error_carries_its_code_message_and_retriability() -> None:
    error = KafkaError(ErrorCode.NOT_COORDINATOR, "group moved")
    assert (error.code, error.message, error.retriable) == (ErrorCode.NOT_COORDINATOR, "group moved", True)
    assert "NOT_COORDINATOR (16)" in str(error)


def test_codes_newer_than_the_table_read_as_unknown_server_error() -> None:
    assert KafkaError(9999).code is ErrorCode.UNKNOWN_SERVER_ERROR
    assert ErrorCode.of(6) is ErrorCode.NOT_LEADER_OR_FOLLOWER
