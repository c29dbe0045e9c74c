"""``spate consume``: records printed as text or JSON, from a chosen position, with a one-line failure."""

from __future__ import annotations

import base64

import pytest

from tests.spate.cli.conftest import assert_one_line_failure, spate
from tests.spate.cli.output import json_lines

pytestmark = pytest.mark.integration


def test_values_that_are_not_utf8_are_marked_base64(bootstrap, topic, make_topic, tmp_path) -> None:
    data = tmp_path / "records.bin"
    data.write_bytes(b"\xff\xfe\n")
    make_topic(1)
    assert spate("produce", topic, "--file", str(data), bootstrap=bootstrap).returncode == 0
    consumed = spate("consume", topic, "--from-beginning", "--format", "json", "--max-messages", "1",
                     bootstrap=bootstrap)
    [record] = json_lines(consumed.stdout)
    assert record["value"] == {"base64": base64.b64encode(b"\xff\xfe").decode()}
    assert record["key"] is None


def test_text_format_prints_values_and_keys_on_request(bootstrap, topic, make_topic) -> None:
    make_topic(1)
    spate("produce", topic, "--key-separator", ",", bootstrap=bootstrap, stdin=b"a,1\nb,2\n")
    plain = spate("consume", topic, "--from-beginning", "--max-messages", "2", bootstrap=bootstrap)
    assert plain.stdout.splitlines() == ["1", "2"]
    keyed = spate("consume", topic, "--from-beginning", "--print-key", "--max-messages", "2",
                  bootstrap=bootstrap)
    assert keyed.stdout.splitlines() == ["a\t1", "b\t2"]


def test_consume_from_a_partition_and_offset_starts_there(bootstrap, topic, make_topic) -> None:
    make_topic(2)
    spate("produce", topic, "--partition", "1", bootstrap=bootstrap, stdin=b"r0\nr1\nr2\n")
    consumed = spate("consume", topic, "--partition", "1", "--offset", "1", "--format", "json",
                     "--max-messages", "2", "--isolation-level", "read_committed", bootstrap=bootstrap)
    assert [(r["partition"], r["offset"], r["value"]) for r in json_lines(consumed.stdout)] == [
        (1, 1, "r1"), (1, 2, "r2")
    ]


def test_consume_without_from_beginning_starts_at_the_log_end(bootstrap, topic, make_topic) -> None:
    make_topic(1)
    spate("produce", topic, bootstrap=bootstrap, stdin=b"old\n")
    consumed = spate("consume", topic, "--timeout-ms", "500", bootstrap=bootstrap)
    assert consumed.returncode == 0 and consumed.stdout == ""
    assert "Processed a total of 0 messages" in consumed.stderr


# --- bad input ----------------------------------------------------------------------------------


def test_consume_of_an_unknown_topic_fails_with_one_line(bootstrap) -> None:
    result = spate("consume", "no-such-topic", "--timeout-ms", "500", bootstrap=bootstrap)
    assert_one_line_failure(result, 1, "'no-such-topic' does not exist")


def test_consume_offset_without_partition_is_a_usage_error(bootstrap, topic) -> None:
    assert_one_line_failure(spate("consume", topic, "--offset", "3", bootstrap=bootstrap), 2, "--partition")


def test_a_max_messages_that_is_not_a_number_is_a_usage_error(bootstrap) -> None:
    assert_one_line_failure(spate("consume", "t", "--max-messages", "many", bootstrap=bootstrap), 2)


def test_consume_against_an_unreachable_broker_fails_with_one_line(refused_address) -> None:
    result = spate("consume", "t", "--api-timeout-ms", "500", bootstrap=refused_address)
    assert_one_line_failure(result, 1, refused_address)
