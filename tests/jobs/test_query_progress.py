"""A streaming job reports its micro-batches and records to ``spate jobs run``."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from jobs.query_progress import QueryProgressListener, report_query_progress
from spate.job_progress import PROGRESS_FILE_ENV, ProgressEvent, ProgressReader, ProgressWriter


def progress_event(batch_id: int, rows: int) -> SimpleNamespace:
    return SimpleNamespace(progress=SimpleNamespace(batchId=batch_id, numInputRows=rows))


def test_each_micro_batch_moves_the_batch_count_and_adds_its_records(tmp_path):
    path = tmp_path / "run.progress"
    listener = QueryProgressListener(ProgressWriter(path), "records ingested")
    listener.onQueryStarted(None)
    listener.onQueryProgress(progress_event(0, 500))
    listener.onQueryProgress(progress_event(1, 250))
    assert ProgressReader(path).new_events() == [
        ProgressEvent("micro-batches", 0), ProgressEvent("micro-batches", 1), ProgressEvent("records ingested", 500),
        ProgressEvent("micro-batches", 2), ProgressEvent("records ingested", 750),
    ]


@pytest.mark.integration
def test_without_a_runner_no_listener_is_added(spark, monkeypatch):
    monkeypatch.delenv(PROGRESS_FILE_ENV, raising=False)
    assert report_query_progress(spark, "rows copied") is None


@pytest.mark.integration
def test_a_real_query_reports_through_the_listener(spark, tmp_path, monkeypatch):
    path = tmp_path / "run.progress"
    monkeypatch.setenv(PROGRESS_FILE_ENV, str(path))
    listener = report_query_progress(spark, "rows copied")
    source = tmp_path / "in"
    spark.range(30).write.json(str(source))
    query = (spark.readStream.schema("id LONG").json(str(source)).writeStream.format("noop")
             .trigger(availableNow=True).start())
    try:
        query.awaitTermination(60)
        reader, seen = ProgressReader(path), []
        deadline = time.monotonic() + 20  # listener events reach Python after the batch, asynchronously
        while ProgressEvent("rows copied", 30) not in seen and time.monotonic() < deadline:
            seen += reader.new_events()
            time.sleep(0.1)
        assert ProgressEvent("rows copied", 30) in seen
    finally:
        query.stop()
        spark.streams.removeListener(listener)
