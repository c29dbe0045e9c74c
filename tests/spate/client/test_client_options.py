"""Parsing the user-facing option values, and refusing conflicting producer settings."""

from __future__ import annotations

import pytest

from spate.client.config import (
    ClientConfig,
    parse_acks,
    parse_bootstrap_servers,
    parse_compression,
)
from spate.client.consumer.subscription_state import OffsetResetStrategy
from spate.client.producer.producer import Producer
from spate.records import Compression
from spate.structs import IsolationLevel


def test_bootstrap_servers_accept_a_comma_list_a_sequence_and_ipv6() -> None:
    assert parse_bootstrap_servers("a:1, b:2") == [("a", 1), ("b", 2)]
    assert parse_bootstrap_servers(["a:1", "PLAINTEXT://b:2"]) == [("a", 1), ("b", 2)]
    assert parse_bootstrap_servers("[::1]:9092") == [("::1", 9092)]


@pytest.mark.parametrize("bad", ["", "host", "host:", ":9092", "host:port", "host:70000"])
def test_malformed_bootstrap_servers_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_bootstrap_servers(bad)


@pytest.mark.parametrize(("given", "expected"), [("all", -1), ("ALL", -1), (-1, -1), (0, 0), (1, 1), ("1", 1)])
def test_acks_accepts_kafka_spellings(given, expected) -> None:
    assert parse_acks(given) == expected


@pytest.mark.parametrize("bad", [2, "some", -2])
def test_other_acks_are_refused(bad) -> None:
    with pytest.raises(ValueError):
        parse_acks(bad)


def test_compression_names_map_to_codecs() -> None:
    assert [parse_compression(n) for n in ("none", "gzip", "snappy", "lz4", "zstd", None)] == [
        Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD, Compression.NONE,
    ]
    with pytest.raises(ValueError):
        parse_compression("brotli")


def test_isolation_levels_and_reset_strategies_parse() -> None:
    assert IsolationLevel.parse("read_committed") == IsolationLevel.READ_COMMITTED
    assert IsolationLevel.parse("read_uncommitted") == IsolationLevel.READ_UNCOMMITTED
    assert OffsetResetStrategy.parse("Earliest") is OffsetResetStrategy.EARLIEST
    with pytest.raises(ValueError):
        IsolationLevel.parse("dirty")
    with pytest.raises(ValueError):
        OffsetResetStrategy.parse("smallest")


def test_client_config_refuses_non_positive_timeouts() -> None:
    with pytest.raises(ValueError):
        ClientConfig(request_timeout_ms=0)
    with pytest.raises(ValueError):
        ClientConfig(retry_backoff_ms=500, retry_backoff_max_ms=100)


@pytest.mark.parametrize(
    "conflict",
    [{"acks": 1}, {"retries": 0}, {"max_in_flight_requests_per_connection": 6}],
)
def test_explicit_idempotence_with_conflicting_settings_is_refused(conflict) -> None:
    with pytest.raises(ValueError, match="enable_idempotence=True needs"):
        Producer("127.0.0.1:1", enable_idempotence=True, **conflict)


@pytest.mark.parametrize(
    ("settings", "idempotent"),
    [({}, True), ({"acks": 1}, False), ({"acks": 0}, False), ({"enable_idempotence": False}, False)],
)
def test_idempotence_defaults_on_unless_the_settings_rule_it_out(settings, idempotent) -> None:
    producer = Producer("127.0.0.1:1", **settings)
    try:
        assert producer.idempotent is idempotent
    finally:
        producer.close(timeout=1)


def test_delivery_timeout_must_cover_linger_and_one_request() -> None:
    with pytest.raises(ValueError, match="delivery_timeout_ms"):
        Producer("127.0.0.1:1", delivery_timeout_ms=1000, request_timeout_ms=30_000)
