"""The sink's options: Spark's Kafka sink names, exactly-once settings, and errors that name the option."""

from __future__ import annotations

import subprocess
import sys

import pytest

from spark_ext.sink_options import (
    DEFAULT_BOOKKEEPING_TOPIC,
    DEFAULT_TRANSACTION_TIMEOUT_MS,
    DeliveryGuarantee,
    SinkOptionError,
    parse_sink_options,
    sink_id_for_checkpoint,
)

BOOTSTRAP = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def test_streaming_defaults_to_exactly_once_with_a_sink_id_from_the_checkpoint() -> None:
    options = parse_sink_options({**BOOTSTRAP, "checkpointLocation": "/data/ckpt/q1"}, streaming=True)
    assert options.delivery is DeliveryGuarantee.EXACTLY_ONCE
    assert options.transactional_id_prefix == sink_id_for_checkpoint("/data/ckpt/q1")
    assert options.transaction_timeout_ms == DEFAULT_TRANSACTION_TIMEOUT_MS
    assert options.bookkeeping_topic == DEFAULT_BOOKKEEPING_TOPIC


def test_batch_defaults_to_at_least_once_and_needs_no_sink_id() -> None:
    options = parse_sink_options({"bootstrap.servers": "h:1", "topic": "t"}, streaming=False)
    assert options.delivery is DeliveryGuarantee.AT_LEAST_ONCE
    assert options.transactional_id_prefix is None
    assert options.topic == "t"


def test_option_names_are_case_insensitive() -> None:
    options = parse_sink_options(
        {"KAFKA.BOOTSTRAP.SERVERS": "h:1", "DELIVERYGUARANTEE": "AT_LEAST_ONCE", "Topic": "t"}, streaming=True
    )
    assert options.delivery is DeliveryGuarantee.AT_LEAST_ONCE
    assert options.bootstrap_servers == "h:1"


def test_transactional_id_prefix_wins_over_the_checkpoint() -> None:
    options = parse_sink_options(
        {**BOOTSTRAP, "checkpointLocation": "/c", "transactionalIdPrefix": "orders-copy"}, streaming=True
    )
    assert options.transactional_id_prefix == "orders-copy"


def test_exactly_once_stream_without_prefix_or_checkpoint_fails_naming_both() -> None:
    with pytest.raises(SinkOptionError) as info:
        parse_sink_options(dict(BOOTSTRAP), streaming=True)
    assert info.value.option == "transactionalIdPrefix"
    assert "checkpointLocation" in str(info.value)


def test_at_least_once_stream_needs_no_checkpoint() -> None:
    options = parse_sink_options({**BOOTSTRAP, "deliveryGuarantee": "at_least_once"}, streaming=True)
    assert not options.exactly_once


def test_sink_id_is_stable_across_spellings_of_the_same_local_path(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    same = {sink_id_for_checkpoint(p) for p in ("ckpt", "./ckpt", "ckpt/", str(tmp_path / "ckpt"))}
    assert len(same) == 1
    assert sink_id_for_checkpoint("ckpt") != sink_id_for_checkpoint("other")
    assert sink_id_for_checkpoint("hdfs://nn/ckpt") != sink_id_for_checkpoint("hdfs://nn/ckpt2")


def test_sink_id_is_the_same_in_another_process() -> None:
    # A hash of the location only: the driver of a restarted query derives the same id.
    code = "from spark_ext.sink_options import sink_id_for_checkpoint as f; print(f('/abs/q/'))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == sink_id_for_checkpoint("/abs/q")
    assert sink_id_for_checkpoint("/abs/q").startswith("spate-sink-")


@pytest.mark.parametrize(
    ("options", "culprit"),
    [
        ({}, "kafka.bootstrap.servers"),
        ({"bootstrap.servers": "nohostport"}, "bootstrap.servers"),
        ({**BOOTSTRAP, "deliveryGuarantee": "twice"}, "deliveryGuarantee"),
        ({**BOOTSTRAP, "topic": " "}, "topic"),
        ({**BOOTSTRAP, "transaction.timeout.ms": "soon"}, "transaction.timeout.ms"),
        ({**BOOTSTRAP, "kafka.transaction.timeout.ms": "0"}, "kafka.transaction.timeout.ms"),
        ({**BOOTSTRAP, "kafka.linger.ms": "-1"}, "kafka.linger.ms"),
        ({**BOOTSTRAP, "kafka.transactional.id": "x"}, "kafka.transactional.id"),
        ({**BOOTSTRAP, "kafka.value.serializer": "x"}, "kafka.value.serializer"),
        ({**BOOTSTRAP, "kafka.sasl.mechanism": "GSSAPI"}, "kafka.sasl.mechanism"),
        ({**BOOTSTRAP, "subscribe": "t"}, "subscribe"),
        ({**BOOTSTRAP, "path": "/x"}, "path"),
        ({**BOOTSTRAP, "transactionalIdPrefix": "p", "kafka.acks": "1"}, "kafka.acks"),
        ({**BOOTSTRAP, "transactionalIdPrefix": "p", "kafka.retries": "0"}, "kafka.retries"),
    ],
)
def test_bad_options_fail_naming_the_option(options: dict[str, str], culprit: str) -> None:
    with pytest.raises(SinkOptionError) as info:
        parse_sink_options(options, streaming=True)
    assert info.value.option == culprit
    assert f"'{culprit}'" in str(info.value)


def test_at_least_once_may_relax_acks() -> None:
    options = parse_sink_options({**BOOTSTRAP, "deliveryGuarantee": "at_least_once", "kafka.acks": "1"},
                                 streaming=True)
    assert options.producer_settings == {"acks": "1"}


def test_producer_settings_are_passed_under_the_producer_keywords() -> None:
    options = parse_sink_options(
        {**BOOTSTRAP, "transactionalIdPrefix": "p", "kafka.compression.type": "lz4", "kafka.linger.ms": "20",
         "kafka.client.id": "copier", "kafka.request.timeout.ms": "5000"},
        streaming=True,
    )
    assert options.producer_settings == {
        "compression_type": "lz4", "linger_ms": 20, "client_id": "copier", "request_timeout_ms": 5000,
    }
    assert options.admin_settings() == {"client_id": "copier", "request_timeout_ms": 5000}
