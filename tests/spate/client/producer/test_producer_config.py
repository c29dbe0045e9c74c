"""The producer's settings: every keyword ``Producer`` takes, its default, and the error a bad value gets."""

from __future__ import annotations

import random
import re
import socket
import time

import pytest

from spate.client import Compression, DefaultPartitioner, Producer
from spate.client.producer.producer_config import ProducerConfig

NOWHERE = "127.0.0.1:1"

# Every keyword Producer(...) took when its constructor listed them one by one, with its default then.
SETTINGS = {
    "acks": -1,
    "compression_type": "none",
    "batch_size": 16_384,
    "linger_ms": 5,
    "enable_idempotence": None,
    "max_in_flight_requests_per_connection": 5,
    "request_timeout_ms": 30_000,
    "delivery_timeout_ms": 120_000,
    "retries": 2_147_483_647,
    "max_request_size": 1_048_576,
    "buffer_memory": 33_554_432,
    "max_block_ms": 60_000,
    "retry_backoff_ms": 100,
    "retry_backoff_max_ms": 1_000,
    "connect_timeout_ms": 10_000,
    "metadata_max_age_ms": 300_000,
    "client_id": "spate-producer",
    "transactional_id": None,
    "transaction_timeout_ms": 60_000,
}
DEPENDENCIES = {
    "partitioner": DefaultPartitioner(),
    "clock": time.monotonic,
    "time_ms": lambda: time.time_ns() // 1_000_000,
    "rng": random.Random(1),
    "socket_factory": socket.create_connection,
}

# One bad value (or conflicting pair) each, and the message it has always raised.
BAD_VALUES = [
    ({"acks": 2}, ValueError, "acks must be 0, 1, -1 or 'all', not 2"),
    ({"transactional_id": ""}, ValueError, "transactional_id must not be empty"),
    ({"transactional_id": "t", "enable_idempotence": False}, ValueError,
     "a transactional producer is idempotent: enable_idempotence cannot be False"),
    ({"compression_type": "brotli"}, ValueError,
     "compression_type must be none, gzip, snappy, lz4 or zstd, not 'brotli'"),
    ({"max_in_flight_requests_per_connection": 0}, ValueError,
     "max_in_flight_requests_per_connection must be at least 1"),
    ({"retries": -1}, ValueError, "retries must not be negative, not -1"),
    ({"delivery_timeout_ms": 1_000}, ValueError, "delivery_timeout_ms must be at least linger_ms + request_timeout_ms"),
    ({"enable_idempotence": True, "acks": 1}, ValueError, "enable_idempotence=True needs: acks must be 'all'"),
    ({"enable_idempotence": True, "retries": 0, "max_in_flight_requests_per_connection": 6}, ValueError,
     "enable_idempotence=True needs: retries must be above 0; "
     "max_in_flight_requests_per_connection must be at most 5"),
    ({"transactional_id": "t", "acks": 1}, ValueError, "enable_idempotence=True needs: acks must be 'all'"),
    ({"request_timeout_ms": 0}, ValueError, "request_timeout_ms must be positive, not 0"),
    ({"connect_timeout_ms": -1}, ValueError, "connect_timeout_ms must be positive, not -1"),
    ({"metadata_max_age_ms": 0}, ValueError, "metadata_max_age_ms must be positive, not 0"),
    ({"retry_backoff_ms": 500, "retry_backoff_max_ms": 100}, ValueError,
     "need 0 <= retry_backoff_ms <= retry_backoff_max_ms"),
    ({"batch_size": 0}, ValueError, "batch_size must be positive, not 0"),
    ({"linger_ms": -5}, ValueError, "linger must not be negative, not -0.005"),
    ({"transaction_timeout_ms": 0}, ValueError, "transaction_timeout_ms must be positive, not 0"),
    ({"lingerms": 5}, TypeError, "Producer.__init__() got an unexpected keyword argument 'lingerms'"),
]


def test_every_keyword_is_accepted_with_its_default() -> None:
    producer = Producer(NOWHERE, **SETTINGS, **DEPENDENCIES)
    try:
        assert producer.idempotent
    finally:
        producer.close(timeout=1)


@pytest.mark.parametrize(("settings", "error", "message"), BAD_VALUES, ids=lambda v: str(v)[:60])
def test_a_bad_value_gets_the_same_error_as_ever(settings, error, message) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        Producer(NOWHERE, **settings)


def test_transaction_timeout_is_checked_only_where_it_is_sent() -> None:
    producer = Producer(NOWHERE, acks=1, transaction_timeout_ms=0)
    try:
        assert not producer.idempotent
    finally:
        producer.close(timeout=1)


def test_the_config_has_the_constructors_defaults_and_parses_values() -> None:
    config = ProducerConfig()
    assert {name: getattr(config, name) for name in SETTINGS} == {
        **SETTINGS, "compression_type": Compression.NONE,
    }
    parsed = ProducerConfig(acks="all", compression_type="LZ4", linger_ms=20, max_block_ms=1_500)
    assert (parsed.acks, parsed.compression, parsed.linger, parsed.max_block) == (-1, Compression.LZ4, 0.02, 1.5)


@pytest.mark.parametrize(
    ("settings", "idempotent"),
    [({}, True), ({"acks": 1}, False), ({"retries": 0}, False), ({"enable_idempotence": False}, False),
     ({"max_in_flight_requests_per_connection": 6}, False), ({"transactional_id": "t"}, True)],
)
def test_idempotence_follows_the_settings(settings, idempotent) -> None:
    assert ProducerConfig(**settings).idempotent is idempotent


def test_the_config_refuses_an_unknown_option_as_the_constructor_would() -> None:
    with pytest.raises(TypeError, match=r"^Producer\.__init__\(\) got an unexpected keyword argument 'acks_all'$"):
        ProducerConfig.from_options("Producer", {"acks_all": True})
    assert ProducerConfig.from_options("Producer", {"acks": "all"}).acks == -1


@pytest.mark.parametrize(
    "conflict",
    [{"acks": 1}, {"retries": 0}, {"max_in_flight_requests_per_connection": 6}],
)
def test_explicit_idempotence_with_conflicting_settings_is_refused(conflict) -> None:
    with pytest.raises(ValueError, match="enable_idempotence=True needs"):
        Producer(NOWHERE, enable_idempotence=True, **conflict)


@pytest.mark.parametrize(
    ("settings", "idempotent"),
    [({}, True), ({"acks": 1}, False), ({"acks": 0}, False), ({"enable_idempotence": False}, False)],
)
def test_idempotence_defaults_on_unless_the_settings_rule_it_out(settings, idempotent) -> None:
    producer = Producer(NOWHERE, **settings)
    try:
        assert producer.idempotent is idempotent
    finally:
        producer.close(timeout=1)


def test_delivery_timeout_must_cover_linger_and_one_request() -> None:
    with pytest.raises(ValueError, match="delivery_timeout_ms"):
        Producer(NOWHERE, delivery_timeout_ms=1000, request_timeout_ms=30_000)
