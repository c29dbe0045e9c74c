"""``spate produce``: lines from stdin or a file become records, with keys, headers, acks and compression."""

from __future__ import annotations

import pytest

from tests.spate.cli.conftest import assert_one_line_failure, spate
from tests.spate.cli.output import json_lines

pytestmark = pytest.mark.integration


def test_produced_lines_come_back_as_json_with_keys_headers_and_offsets(bootstrap, topic, make_topic) -> None:
    make_topic(1)
    produced = spate("produce", topic, "--key-separator", ":", "--header", "source=cli", "--acks", "1",
                     "--compression", "lz4", bootstrap=bootstrap, stdin=b"k1:v1\nk2:v2=x\n")
    assert produced.returncode == 0, produced
    assert produced.stderr_lines == [line for line in produced.stderr_lines if "Produced 2 records" in line]
    consumed = spate("consume", topic, "--from-beginning", "--format", "json", "--max-messages", "2",
                     "--timeout-ms", "5000", bootstrap=bootstrap)
    assert consumed.returncode == 0, consumed
    records = json_lines(consumed.stdout)
    assert [(r["key"], r["value"], r["offset"], r["partition"]) for r in records] == [
        ("k1", "v1", 0, 0), ("k2", "v2=x", 1, 0)
    ]
    assert all(r["headers"] == [{"key": "source", "value": "cli"}] and r["timestamp"] > 0 for r in records)
    assert "Processed a total of 2 messages" in consumed.stderr


# --- bad input ----------------------------------------------------------------------------------


def test_produce_from_a_missing_file_fails_with_one_line(bootstrap, topic, tmp_path) -> None:
    missing = tmp_path / "absent.txt"
    result = spate("produce", topic, "--file", str(missing), bootstrap=bootstrap)
    assert_one_line_failure(result, 1, str(missing))


def test_produce_of_a_line_without_the_key_separator_fails_naming_the_line(bootstrap, topic, make_topic) -> None:
    make_topic()
    result = spate("produce", topic, "--key-separator", ":", bootstrap=bootstrap, stdin=b"a:1\nnokey\n")
    assert_one_line_failure(result, 1, "line 2")


def test_produce_to_a_partition_the_topic_lacks_fails(bootstrap, topic, make_topic) -> None:
    make_topic(1)
    result = spate("produce", topic, "--partition", "5", bootstrap=bootstrap, stdin=b"x\n")
    assert_one_line_failure(result, 1, "no partition 5")


def test_an_acks_value_kafka_does_not_know_is_a_usage_error(bootstrap) -> None:
    assert_one_line_failure(spate("produce", "t", "--acks", "2", bootstrap=bootstrap), 2)
