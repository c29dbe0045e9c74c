"""The README's main job, run as a user would run it, and the notebook-style example."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from broker_core.server.embedded import EmbeddedBroker
from examples.topic_as_dataframe import partition_summary, read_topic, views_per_page
from jobs.quickstart import (
    EVENTS_TOPIC,
    PAGES,
    create_topics,
    page_view_events,
    produce,
    run,
)

REPO = Path(__file__).resolve().parents[2]


def test_every_event_is_counted_exactly_once_per_minute_and_page(spark, tmp_path):
    # The job uses the active session (the test run's one) and leaves it running.
    counts = run(tmp_path / "data", 3_000, Console(file=open("/dev/null", "w")))
    assert not spark.sparkContext._jsc.sc().isStopped()
    assert sum(counts.values()) == 3_000
    assert {page for _, page in counts} <= set(PAGES)
    assert all(window % 60_000 == 0 for window, _ in counts)


def test_the_module_runs_from_the_command_line_and_prints_the_summary(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "jobs.quickstart", "--events", "2000", "--data-dir", str(tmp_path / "data")],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "2,000 events in, 2,000 counted" in result.stdout
    # Quiet: no Spark log lines, stage progress bars or warnings about Spate's own topics.
    output = result.stdout + result.stderr
    assert not [line for line in output.splitlines() if " WARN " in line or " INFO " in line]
    assert "[Stage" not in output
    assert "Using Spark's default log4j profile" not in output
    assert "metric names treat them alike" not in output
    # And where to look next.
    assert "spate console --bootstrap-server 127.0.0.1:9092" in result.stdout
    assert "spate cluster up --monitoring" in result.stdout


def test_a_bad_event_count_is_a_usage_error(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "jobs.quickstart", "--events", "-5", "--data-dir", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 2
    assert "--events must be positive" in result.stderr


def test_the_notebook_example_reads_a_topic_as_a_dataframe(spark, tmp_path):
    with EmbeddedBroker(tmp_path / "data") as broker:
        create_topics(broker.bootstrap_servers)
        produce(broker.bootstrap_servers, EVENTS_TOPIC, page_view_events(600, now_ms=1_700_000_000_000,
                                                                         rng=random.Random(3)))
        events = read_topic(spark, broker.bootstrap_servers, EVENTS_TOPIC)
        assert events.columns[:7] == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
        summary = partition_summary(events).collect()
        assert sum(row.records for row in summary) == 600
        views = {row.page: row.views for row in views_per_page(events).collect()}
        assert sum(views.values()) == 600 and set(views) <= set(PAGES)
