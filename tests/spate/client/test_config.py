"""Parsing the user-facing option values, and the settings every client shares."""

from __future__ import annotations

import pytest

from spate.client.config import (
    ClientConfig,
    parse_acks,
    parse_bootstrap_servers,
    parse_compression,
    timeout_seconds,
)
from spate.client.consumer.subscription_state import OffsetResetStrategy
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


def test_a_config_is_built_from_a_constructors_keywords_or_refuses_an_unknown_one() -> None:
    config = ClientConfig.from_options("Client", {"client_id": "me", "request_timeout_ms": 1_000})
    assert (config.client_id, config.request_timeout_ms, config.connect_timeout_ms) == ("me", 1_000, 10_000)
    with pytest.raises(TypeError, match=r"^Client\.__init__\(\) got an unexpected keyword argument 'timeout'$"):
        ClientConfig.from_options("Client", {"timeout": 1})


def test_a_calls_timeout_is_in_seconds_with_the_default_for_none_and_zero_for_negative() -> None:
    assert timeout_seconds(None, 2.5) == 2.5
    assert timeout_seconds(1_500, 2.5) == 1.5
    assert timeout_seconds(-10, 2.5) == 0.0
