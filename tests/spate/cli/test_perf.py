"""``spate perf produce|consume|end-to-end``: throughput and latency percentiles, and the helpers behind them."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spate.cli.perf import Summary, Throttle, percentile
from tests.spate.cli.conftest import assert_one_line_failure, spate

PERCENTILES = re.compile(
    r"^(\d+) records (\w[\w-]*), [\d.]+ records/sec \([\d.]+ MB/sec\), [\d.]+ ms avg latency, "
    r"[\d.]+ ms max latency, [\d.]+ ms 50th, [\d.]+ ms 95th, [\d.]+ ms 99th, [\d.]+ ms 99.9th\.$"
)


# --- percentiles and pacing ---------------------------------------------------------------------


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


# --- against a broker ---------------------------------------------------------------------------


@pytest.mark.integration
def test_perf_produce_then_consume_report_throughput_and_latency_percentiles(bootstrap, topic, make_topic) -> None:
    make_topic(2)
    produced = spate("perf", "produce", "--topic", topic, "--records", "2000", "--record-size", "100",
                     "--acks", "all", "--compression", "gzip", "--throughput", "-1", bootstrap=bootstrap)
    assert produced.returncode == 0, produced
    match = PERCENTILES.match(produced.stdout.strip())
    assert match and match.groups() == ("2000", "sent"), produced.stdout
    consumed = spate("perf", "consume", "--topic", topic, "--records", "2000", bootstrap=bootstrap)
    assert consumed.returncode == 0, consumed
    match = PERCENTILES.match(consumed.stdout.strip())
    assert match and match.groups() == ("2000", "consumed"), consumed.stdout


@pytest.mark.integration
def test_perf_end_to_end_reports_round_trip_latency_percentiles(bootstrap, topic, make_topic) -> None:
    make_topic(1)
    result = spate("perf", "end-to-end", "--topic", topic, "--records", "200", "--throughput", "1000",
                   bootstrap=bootstrap)
    assert result.returncode == 0, result
    match = PERCENTILES.match(result.stdout.strip())
    assert match and match.groups() == ("200", "round-tripped"), result.stdout


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.parametrize("args", [
    ["perf", "produce", "--topic", "t", "--records", "-1", "--record-size", "10"],
    ["perf", "consume", "--topic", "t"],
])
def test_invalid_arguments_are_usage_errors(bootstrap, args) -> None:
    assert_one_line_failure(spate(*args, bootstrap=bootstrap), 2)


@pytest.mark.integration
def test_perf_produce_against_an_unreachable_broker_fails_with_one_line(refused_address) -> None:
    result = spate("perf", "produce", "--topic", "t", "--records", "10", "--record-size", "10",
                   "--api-timeout-ms", "500", bootstrap=refused_address)
    assert_one_line_failure(result, 1)
