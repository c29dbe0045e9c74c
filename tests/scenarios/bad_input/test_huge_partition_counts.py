"""A CreateTopics or CreatePartitions with an absurd partition count cannot take the broker down.

The frames are raw bytes, as a fuzzer or a typo would send them: CreateTopics
v2 of a topic with 100,000 or 2^31-1 partitions (validate_only or not), and
CreatePartitions v1 growing an existing topic to 2^31-1. Each is answered
within seconds with Kafka's error naming the limit (``max.partitions``,
``max.broker.partitions``); afterwards the broker still serves, holds no trace
of the refused topic, and restarts.
"""

from __future__ import annotations

import socket
import struct
import time

import pytest

from spate.protocol.errors import ErrorCode
from tests.support.admin_requests import create_topic, produce_one
from tests.support.broker_process import BrokerProcess
from tests.support.broker_under_test import require_spate

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

E = ErrorCode
ANSWER_WITHIN_S = 3.0
# CreateTopics v2, correlation id 7, client "fuzz": topic "huge", 100,000 partitions, replication factor 1,
# no assignment, no configs, timeout 30 s, validate_only false.
REPRODUCER = bytes.fromhex(
    "0000002b0013000200000007000466757a7a00000001000468756765000186a0000100000000000000000000753000"
)
INT32_MAX = 2**31 - 1


def create_topics_frame(partitions: int, *, validate_only: bool = False) -> bytes:
    """The reproducer with another partition count and validate_only flag."""
    frame = bytearray(REPRODUCER)
    frame[28:32] = struct.pack(">i", partitions)
    frame[-1] = int(validate_only)
    return bytes(frame)


def create_partitions_frame(topic: str, count: int, *, validate_only: bool = False) -> bytes:
    """CreatePartitions v1, correlation id 9: grow ``topic`` to ``count``, no assignment, timeout 30 s."""
    name = topic.encode()
    body = (struct.pack(">i", 1) + struct.pack(">h", len(name)) + name + struct.pack(">ii", count, -1)
            + struct.pack(">i?", 30000, validate_only))
    header = struct.pack(">hhih", 37, 1, 9, 4) + b"fuzz"
    return struct.pack(">i", len(header) + len(body)) + header + body


def send(broker: BrokerProcess, frame: bytes) -> tuple[int, str | None, float]:
    """(error code, error message, seconds to answer) of the one topic in a CreateTopics v2 /
    CreatePartitions v1 answer: both are throttle time, then [name, error code, error message]."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", broker.port), timeout=30) as sock:
        sock.sendall(frame)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
            chunk = sock.recv(65536)
            assert chunk, "the broker closed the connection instead of answering"
            data += chunk
    took = time.monotonic() - started
    body = data[8:]  # size, correlation id
    (count,) = struct.unpack(">i", body[4:8])
    assert count == 1
    (name_length,) = struct.unpack(">h", body[8:10])
    at = 10 + name_length
    code, message_length = struct.unpack(">hh", body[at:at + 4])
    message = body[at + 4:at + 4 + message_length].decode() if message_length >= 0 else None
    return code, message, took


def partition_dirs(broker: BrokerProcess, topic: str) -> list[str]:
    return sorted(p.name for p in broker.log_dir.iterdir() if p.name.startswith(f"{topic}-"))


@pytest.fixture(autouse=True)
def spate_only(broker_kind: str) -> None:
    require_spate(broker_kind, "the partition limits are Spate's settings")


def assert_serves(broker: BrokerProcess, topic: str) -> None:
    broker.check_alive()
    assert create_topic(broker.bootstrap, topic, partitions=1).error_code in (E.NONE, E.TOPIC_ALREADY_EXISTS)
    assert produce_one(broker.bootstrap, topic).error_code == E.NONE


@pytest.mark.parametrize("validate_only", [False, True], ids=["create", "validate-only"])
def test_the_reproducer_is_refused_by_the_broker_limit_at_once(broker: BrokerProcess, validate_only: bool,
                                                               topic_name) -> None:
    code, message, took = send(broker, create_topics_frame(100_000, validate_only=validate_only))
    assert code == E.POLICY_VIOLATION, message
    assert "max.broker.partitions" in message or "max.partitions" in message
    assert took < ANSWER_WITHIN_S
    assert partition_dirs(broker, "huge") == []
    assert_serves(broker, topic_name())


@pytest.mark.parametrize("validate_only", [False, True], ids=["create", "validate-only"])
def test_int32_max_partitions_is_an_invalid_count(broker: BrokerProcess, validate_only: bool, topic_name) -> None:
    code, message, took = send(broker, create_topics_frame(INT32_MAX, validate_only=validate_only))
    assert code == E.INVALID_PARTITIONS, message
    assert "max.partitions=100000" in message and str(INT32_MAX) in message
    assert took < ANSWER_WITHIN_S
    assert_serves(broker, topic_name())


@pytest.mark.parametrize("validate_only", [False, True], ids=["create", "validate-only"])
def test_growing_a_topic_to_int32_max_partitions_is_refused(broker: BrokerProcess, validate_only: bool,
                                                            topic_name) -> None:
    topic = topic_name()
    assert create_topic(broker.bootstrap, topic, partitions=1).error_code == E.NONE
    code, message, took = send(broker, create_partitions_frame(topic, INT32_MAX, validate_only=validate_only))
    assert code == E.INVALID_PARTITIONS, message
    assert "max.partitions" in message
    assert took < ANSWER_WITHIN_S
    code, message, took = send(broker, create_partitions_frame(topic, 100_000, validate_only=validate_only))
    assert code == E.POLICY_VIOLATION, message
    assert took < ANSWER_WITHIN_S
    assert partition_dirs(broker, topic) == [f"{topic}-0"]
    assert_serves(broker, topic)


def test_the_broker_restarts_after_the_refusals_and_knows_no_huge_topic(broker: BrokerProcess, topic_name) -> None:
    for frame in (REPRODUCER, create_topics_frame(INT32_MAX)):
        send(broker, frame)
    broker.restart()
    assert partition_dirs(broker, "huge") == []
    assert create_topic(broker.bootstrap, "huge", partitions=1, validate_only=True).error_code == E.NONE
    assert_serves(broker, topic_name())
