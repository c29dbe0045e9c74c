"""``kafka-console-producer.sh`` and ``kafka-console-consumer.sh`` against a broker process."""

from __future__ import annotations

import pytest

from tests.spate.cli.kafka_tools.conftest import run_tool

pytestmark = pytest.mark.integration


def test_lines_produced_are_consumed_from_the_beginning(kafka_tool, topic) -> None:
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic)
    produced = kafka_tool("kafka-console-producer.sh", "--topic", topic, stdin=b"one\ntwo\nthree\n")
    assert produced.returncode == 0, produced
    consumed = kafka_tool("kafka-console-consumer.sh", "--topic", topic, "--from-beginning", "--max-messages", "3")
    assert consumed.returncode == 0, consumed
    assert consumed.stdout.splitlines() == ["one", "two", "three"]
    assert "Processed a total of 3 messages" in consumed.stderr


def test_keys_are_parsed_and_printed_with_their_separators(kafka_tool, topic) -> None:
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic)
    kafka_tool("kafka-console-producer.sh", "--topic", topic, "--property", "parse.key=true",
               "--property", "key.separator=:", "--producer-property", "acks=1", stdin=b"k1:v1\nk2:v2\n")
    consumed = kafka_tool("kafka-console-consumer.sh", "--topic", topic, "--from-beginning", "--max-messages", "2",
                          "--property", "print.key=true", "--property", "key.separator=|")
    assert consumed.stdout.splitlines() == ["k1|v1", "k2|v2"]


def test_partition_and_offset_start_where_asked(kafka_tool, broker, topic) -> None:
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic)
    # --broker-list: the producer's older name for --bootstrap-server.
    produced = run_tool("kafka-console-producer.sh", "--broker-list", broker.bootstrap, "--topic", topic,
                        stdin=b"a\nb\nc\n")
    assert produced.returncode == 0, produced
    consumed = kafka_tool("kafka-console-consumer.sh", "--topic", topic, "--partition", "0", "--offset", "1",
                          "--max-messages", "2")
    assert consumed.stdout.splitlines() == ["b", "c"]


def test_timeout_ms_ends_an_idle_consumer(kafka_tool, topic) -> None:
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic)
    consumed = kafka_tool("kafka-console-consumer.sh", "--topic", topic, "--timeout-ms", "500")
    assert consumed.returncode == 0, consumed
    assert "Processed a total of 0 messages" in consumed.stderr


def test_an_offset_without_a_partition_is_refused(kafka_tool, topic) -> None:
    refused = kafka_tool("kafka-console-consumer.sh", "--topic", topic, "--offset", "3")
    assert refused.returncode == 1
    assert "The partition is required when offset is specified." in refused.stderr
