"""``spate perf --series FILE --plot FILE --output json``: the per-second series of a run, as data and as a plot."""

from __future__ import annotations

import csv
import json

import pytest

from spate.cli.perf import Summary
from spate.cli.perf_series import Series, plot_series, write_series
from tests.spate.cli.conftest import spate

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_the_series_has_one_row_per_second_quiet_seconds_included() -> None:
    series = Series(start=100.0)
    series.add(100.2, 10, 1000)
    series.add(100.9, 5, 500)
    series.latency(100.5, 2.0)
    series.latency(100.6, 4.0)
    series.add(102.1, 1, 100)
    rows = series.rows()
    assert [row["second"] for row in rows] == [0, 1, 2]
    assert rows[0]["records"] == 15 and rows[0]["avg_latency_ms"] == 3.0 and rows[0]["max_latency_ms"] == 4.0
    assert rows[1] == {"second": 1, "records": 0, "mb": 0.0, "avg_latency_ms": 0.0, "max_latency_ms": 0.0}
    assert rows[2]["records"] == 1
    assert Series(start=0.0).rows() == []


def test_the_series_is_written_as_csv_or_json_by_the_file_name(tmp_path) -> None:
    series = Series(start=0.0)
    series.add(0.5, 3, 3 * 1024 * 1024)
    rows = series.rows()
    write_series(rows, tmp_path / "run.csv")
    with (tmp_path / "run.csv").open() as f:
        assert list(csv.DictReader(f)) == [{"second": "0", "records": "3", "mb": "3.0", "avg_latency_ms": "0.0",
                                            "max_latency_ms": "0.0"}]
    write_series(rows, tmp_path / "run.json")
    assert json.loads((tmp_path / "run.json").read_text()) == {"series": rows}


def test_the_plot_is_an_image(tmp_path) -> None:
    series = Series(start=0.0)
    for second in range(3):
        series.add(second + 0.1, 100 * (second + 1), 0)
        series.latency(second + 0.1, 1.5)
    plot_series(series.rows(), tmp_path / "run.png", "a run")
    assert (tmp_path / "run.png").read_bytes().startswith(PNG_SIGNATURE)


def test_the_json_summary_has_the_numbers_of_the_line() -> None:
    document = Summary(records=1000, bytes=1024 * 1024, seconds=2.0, latencies_ms=[1.0, 2.0, 3.0, 4.0]).document("sent")
    assert document["records"] == 1000 and document["verb"] == "sent"
    assert document["records_per_sec"] == 500.0 and document["mb_per_sec"] == 0.5
    assert document["avg_latency_ms"] == 2.5 and document["p50_latency_ms"] == 2.0 and document["p95_latency_ms"] == 4.0


@pytest.mark.integration
def test_a_produce_and_consume_run_write_their_series_and_plots(bootstrap, topic, make_topic, tmp_path) -> None:
    make_topic(2)
    produced = spate("perf", "produce", "--topic", topic, "--records", "3000", "--record-size", "100",
                     "--output", "json", "--series", str(tmp_path / "produce.csv"), "--plot", str(tmp_path / "p.png"),
                     bootstrap=bootstrap)
    assert produced.returncode == 0, produced
    summary = json.loads(produced.stdout)
    assert summary["records"] == 3000 and summary["verb"] == "sent" and summary["records_per_sec"] > 0
    with (tmp_path / "produce.csv").open() as f:
        assert sum(int(row["records"]) for row in csv.DictReader(f)) == 3000
    assert (tmp_path / "p.png").read_bytes().startswith(PNG_SIGNATURE)

    consumed = spate("perf", "consume", "--topic", topic, "--records", "3000", "--series", str(tmp_path / "c.json"),
                     bootstrap=bootstrap)
    assert consumed.returncode == 0, consumed
    rows = json.loads((tmp_path / "c.json").read_text())["series"]
    assert sum(row["records"] for row in rows) == 3000
    assert "records consumed" in consumed.stdout


@pytest.mark.integration
def test_an_unwritable_series_file_is_one_line_on_stderr(bootstrap, topic, make_topic, tmp_path) -> None:
    make_topic(1)
    result = spate("perf", "produce", "--topic", topic, "--records", "10", "--record-size", "10",
                   "--series", str(tmp_path / "missing-dir" / "s.csv"), bootstrap=bootstrap)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "--series" in result.stderr
