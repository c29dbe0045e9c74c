"""``spate produce``, ``spate consume`` and ``spate perf ...`` against a real broker."""

from __future__ import annotations

import base64
import json
import re

import pytest

from tests.spate.cli.conftest import assert_one_line_failure, spate

pytestmark = pytest.mark.integration

PERCENTILES = re.compile(
    r"^(\d+) records (\w[\w-]*), [\d.]+ records/sec \([\d.]+ MB/sec\), [\d.]+ ms avg latency, "
    r"[\d.]+ ms max latency, [\d.]+ ms 50th, [\d.]+ ms 95th, [\d.]+ ms 99th, [\d.]+ ms 99.9th\.$"
)


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_produced_lines_come_back_as_json_with_keys_headers_and_offsets(bootstrap, topic_name, make_topic) -> None:
    make_topic(1)
    produced = spate("produce", topic_name, "--key-separator", ":", "--header", "source=cli", "--acks", "1",
                     "--compression", "lz4", bootstrap=bootstrap, stdin=b"k1:v1\nk2:v2=x\n")
    assert produced.returncode == 0, produced
    assert produced.stderr_lines == [line for line in produced.stderr_lines if "Produced 2 records" in line]
    consumed = spate("consume", topic_name, "--from-beginning", "--format", "json", "--max-messages", "2",
                     "--timeout-ms", "5000", bootstrap=bootstrap)
    assert consumed.returncode == 0, consumed
    records = json_lines(consumed.stdout)
    assert [(r["key"], r["value"], r["offset"], r["partition"]) for r in records] == [
        ("k1", "v1", 0, 0), ("k2", "v2=x", 1, 0)
    ]
    assert all(r["headers"] == [{"key": "source", "value": "cli"}] and r["timestamp"] > 0 for r in records)
    assert "Processed a total of 2 messages" in consumed.stderr


def test_values_that_are_not_utf8_are_marked_base64(bootstrap, topic_name, make_topic, tmp_path) -> None:
    data = tmp_path / "records.bin"
    data.write_bytes(b"\xff\xfe\n")
    make_topic(1)
    assert spate("produce", topic_name, "--file", str(data), bootstrap=bootstrap).returncode == 0
    consumed = spate("consume", topic_name, "--from-beginning", "--format", "json", "--max-messages", "1",
                     bootstrap=bootstrap)
    [record] = json_lines(consumed.stdout)
    assert record["value"] == {"base64": base64.b64encode(b"\xff\xfe").decode()}
    assert record["key"] is None


def test_text_format_prints_values_and_keys_on_request(bootstrap, topic_name, make_topic) -> None:
    make_topic(1)
    spate("produce", topic_name, "--key-separator", ",", bootstrap=bootstrap, stdin=b"a,1\nb,2\n")
    plain = spate("consume", topic_name, "--from-beginning", "--max-messages", "2", bootstrap=bootstrap)
    assert plain.stdout.splitlines() == ["1", "2"]
    keyed = spate("consume", topic_name, "--from-beginning", "--print-key", "--max-messages", "2",
                  bootstrap=bootstrap)
    assert keyed.stdout.splitlines() == ["a\t1", "b\t2"]


def test_consume_from_a_partition_and_offset_starts_there(bootstrap, topic_name, make_topic) -> None:
    make_topic(2)
    spate("produce", topic_name, "--partition", "1", bootstrap=bootstrap, stdin=b"r0\nr1\nr2\n")
    consumed = spate("consume", topic_name, "--partition", "1", "--offset", "1", "--format", "json",
                     "--max-messages", "2", "--isolation-level", "read_committed", bootstrap=bootstrap)
    assert [(r["partition"], r["offset"], r["value"]) for r in json_lines(consumed.stdout)] == [
        (1, 1, "r1"), (1, 2, "r2")
    ]


def test_consume_without_from_beginning_starts_at_the_log_end(bootstrap, topic_name, make_topic) -> None:
    make_topic(1)
    spate("produce", topic_name, bootstrap=bootstrap, stdin=b"old\n")
    consumed = spate("consume", topic_name, "--timeout-ms", "500", bootstrap=bootstrap)
    assert consumed.returncode == 0 and consumed.stdout == ""
    assert "Processed a total of 0 messages" in consumed.stderr


def test_perf_produce_then_consume_report_throughput_and_latency_percentiles(bootstrap, topic_name, make_topic) -> None:
    make_topic(2)
    produced = spate("perf", "produce", "--topic", topic_name, "--records", "2000", "--record-size", "100",
                     "--acks", "all", "--compression", "gzip", "--throughput", "-1", bootstrap=bootstrap)
    assert produced.returncode == 0, produced
    match = PERCENTILES.match(produced.stdout.strip())
    assert match and match.groups() == ("2000", "sent"), produced.stdout
    consumed = spate("perf", "consume", "--topic", topic_name, "--records", "2000", bootstrap=bootstrap)
    assert consumed.returncode == 0, consumed
    match = PERCENTILES.match(consumed.stdout.strip())
    assert match and match.groups() == ("2000", "consumed"), consumed.stdout


def test_perf_end_to_end_reports_round_trip_latency_percentiles(bootstrap, topic_name, make_topic) -> None:
    make_topic(1)
    result = spate("perf", "end-to-end", "--topic", topic_name, "--records", "200", "--throughput", "1000",
                   bootstrap=bootstrap)
    assert result.returncode == 0, result
    match = PERCENTILES.match(result.stdout.strip())
    assert match and match.groups() == ("200", "round-tripped"), result.stdout


# --- bad input ----------------------------------------------------------------------------------


def test_produce_from_a_missing_file_fails_with_one_line(bootstrap, topic_name, tmp_path) -> None:
    missing = tmp_path / "absent.txt"
    result = spate("produce", topic_name, "--file", str(missing), bootstrap=bootstrap)
    assert_one_line_failure(result, 1, str(missing))


def test_produce_of_a_line_without_the_key_separator_fails_naming_the_line(bootstrap, topic_name, make_topic) -> None:
    make_topic()
    result = spate("produce", topic_name, "--key-separator", ":", bootstrap=bootstrap, stdin=b"a:1\nnokey\n")
    assert_one_line_failure(result, 1, "line 2")


def test_produce_to_a_partition_the_topic_lacks_fails(bootstrap, topic_name, make_topic) -> None:
    make_topic(1)
    result = spate("produce", topic_name, "--partition", "5", bootstrap=bootstrap, stdin=b"x\n")
    assert_one_line_failure(result, 1, "no partition 5")


def test_consume_of_an_unknown_topic_fails_with_one_line(bootstrap) -> None:
    result = spate("consume", "no-such-topic", "--timeout-ms", "500", bootstrap=bootstrap)
    assert_one_line_failure(result, 1, "'no-such-topic' does not exist")


def test_consume_offset_without_partition_is_a_usage_error(bootstrap, topic_name) -> None:
    assert_one_line_failure(spate("consume", topic_name, "--offset", "3", bootstrap=bootstrap), 2, "--partition")


@pytest.mark.parametrize("args", [
    ["consume", "t", "--max-messages", "many"],
    ["produce", "t", "--acks", "2"],
    ["perf", "produce", "--topic", "t", "--records", "-1", "--record-size", "10"],
    ["perf", "consume", "--topic", "t"],
])
def test_invalid_arguments_are_usage_errors(bootstrap, args) -> None:
    assert_one_line_failure(spate(*args, bootstrap=bootstrap), 2)


def test_perf_produce_against_an_unreachable_broker_fails_with_one_line(refused_address) -> None:
    result = spate("perf", "produce", "--topic", "t", "--records", "10", "--record-size", "10",
                   "--api-timeout-ms", "500", bootstrap=refused_address)
    assert_one_line_failure(result, 1)


def test_consume_against_an_unreachable_broker_fails_with_one_line(refused_address) -> None:
    result = spate("consume", "t", "--api-timeout-ms", "500", bootstrap=refused_address)
    assert_one_line_failure(result, 1, refused_address)
