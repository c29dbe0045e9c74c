"""The CLI's pure helpers: percentiles, pacing, argument types and byte decoding."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spate.cli.common import decoded, key_value, non_negative_int, positive_int
from spate.cli.perf import Summary, Throttle, percentile


def test_percentile_uses_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.95) == 95.0
    assert percentile(values, 0.999) == 100.0


def test_percentile_of_no_values_is_zero() -> None:
    assert percentile([], 0.99) == 0.0


@settings(max_examples=100)
@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=50), st.floats(0.01, 1.0))
def test_percentile_is_one_of_the_values_and_grows_with_the_fraction(values, fraction) -> None:
    ordered = sorted(values)
    assert percentile(ordered, fraction) in ordered
    assert percentile(ordered, fraction) <= percentile(ordered, 1.0) == ordered[-1]


def test_summary_line_reports_rates_and_percentiles() -> None:
    line = Summary(records=1000, bytes=1024 * 1024, seconds=2.0, latencies_ms=[1.0, 2.0, 3.0, 4.0]).line("sent")
    assert line.startswith("1000 records sent, 500.0 records/sec (0.50 MB/sec), 2.50 ms avg latency")
    assert "4.00 ms max latency, 2.00 ms 50th, 4.00 ms 95th" in line


def test_throttle_sleeps_until_the_send_is_due() -> None:
    now = [0.0]
    slept: list[float] = []
    throttle = Throttle(10.0, clock=lambda: now[0], sleep=slept.append)
    throttle.wait_for(5)  # the 5th record at 10/s is due at 0.5 s
    assert slept == [0.5]


def test_unlimited_throttle_never_sleeps() -> None:
    slept: list[float] = []
    Throttle(-1, clock=lambda: 0.0, sleep=slept.append).wait_for(1_000_000)
    assert slept == []


def test_decoded_gives_text_for_utf8_and_marked_base64_otherwise() -> None:
    assert decoded(b"h\xc3\xa9") == "hé"
    assert decoded(b"\xff") == {"base64": "/w=="}
    assert decoded(None) is None


def test_key_value_splits_at_the_first_equals_sign() -> None:
    assert key_value("a=b=c") == ("a", "b=c")
    assert key_value("empty=") == ("empty", "")


@pytest.mark.parametrize("text", ["novalue", "=v"])
def test_key_value_rejects_a_missing_key_or_equals_sign(text) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        key_value(text)


def test_number_types_reject_out_of_range_and_non_numbers() -> None:
    assert positive_int(" 3 ") == 3 and non_negative_int("0") == 0
    for parse, bad in ((positive_int, "0"), (non_negative_int, "-1"), (positive_int, "x")):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(bad)
