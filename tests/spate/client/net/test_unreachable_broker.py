"""Against a broker that cannot be reached, or never answers, every client fails fast and says why."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from spate.client import (
    Admin,
    ClientClosedError,
    Consumer,
    KafkaTimeoutError,
    Producer,
    TopicPartition,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

SHORT_MS = 1000
# Generous for slow CI machines; the point is "about the timeout", not "minutes later".
SLACK_S = 2.0


@pytest.fixture
def refused_address() -> str:
    """An address where nothing listens: connections are refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
def silent_address() -> Iterator[str]:
    """A socket that completes TCP handshakes (the kernel does that) but never reads or answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"127.0.0.1:{sock.getsockname()[1]}"


def elapsed_since(started: float) -> float:
    return time.monotonic() - started


def test_admin_against_a_refused_address_times_out_naming_it(refused_address) -> None:
    with Admin(refused_address) as admin:
        started = time.monotonic()
        with pytest.raises(KafkaTimeoutError) as raised:
            admin.list_topics(timeout_ms=SHORT_MS)
    assert elapsed_since(started) < SHORT_MS / 1000 + SLACK_S
    message = str(raised.value)
    assert "list_topics" in message and refused_address in message and "refused" in message.lower()


def test_consumer_offset_lookup_against_a_refused_address_times_out(refused_address) -> None:
    with Consumer(refused_address) as consumer:
        started = time.monotonic()
        with pytest.raises(KafkaTimeoutError, match=refused_address):
            consumer.end_offsets([TopicPartition("t", 0)], timeout_ms=SHORT_MS)
    assert elapsed_since(started) < SHORT_MS / 1000 + SLACK_S


def test_consumer_poll_against_a_refused_address_returns_empty_on_time(refused_address) -> None:
    with Consumer(refused_address) as consumer:
        consumer.assign([TopicPartition("t", 0)])
        started = time.monotonic()
        assert consumer.poll(timeout_ms=500) == []
    assert elapsed_since(started) < 0.5 + SLACK_S


def test_producer_send_without_metadata_blocks_at_most_max_block_ms(refused_address) -> None:
    with Producer(refused_address, max_block_ms=SHORT_MS) as producer:
        started = time.monotonic()
        with pytest.raises(KafkaTimeoutError, match="not present in metadata after 1000 ms"):
            producer.send("t", b"v")
        assert elapsed_since(started) < SHORT_MS / 1000 + SLACK_S


def test_a_broker_that_never_answers_is_given_up_on_after_the_connect_timeout(silent_address) -> None:
    with Admin(silent_address, connect_timeout_ms=300, request_timeout_ms=300) as admin:
        started = time.monotonic()
        with pytest.raises(KafkaTimeoutError) as raised:
            admin.describe_cluster(timeout_ms=SHORT_MS)
    assert elapsed_since(started) < SHORT_MS / 1000 + SLACK_S
    assert "did not answer API_VERSIONS" in str(raised.value)


def test_close_of_a_producer_with_undeliverable_records_honours_its_timeout(refused_address) -> None:
    producer = Producer(refused_address, max_block_ms=200)
    with pytest.raises(KafkaTimeoutError):
        producer.send("t", b"v")
    started = time.monotonic()
    producer.close(timeout=0.5)
    assert elapsed_since(started) < 0.5 + SLACK_S
    assert producer.closed


def test_records_still_queued_when_close_times_out_fail_with_client_closed(spate_broker, topic_name) -> None:
    topic = topic_name()
    producer = Producer(spate_broker.bootstrap, linger_ms=0, request_timeout_ms=1000, delivery_timeout_ms=30_000)
    producer.send(topic, b"before").result(timeout=20)
    spate_broker.kill()
    stranded = [producer.send(topic, b"after") for _ in range(5)]
    started = time.monotonic()
    producer.close(timeout=0.5)
    assert elapsed_since(started) < 0.5 + SLACK_S
    for future in stranded:
        with pytest.raises(ClientClosedError):
            future.result(timeout=5)
