"""A job's progress file: one JSON line per update, written only when a runner asked for it."""

from __future__ import annotations

from spate.job_progress import PROGRESS_FILE_ENV, ProgressEvent, ProgressReader, ProgressWriter


def test_without_a_runner_the_writer_writes_nothing(monkeypatch, tmp_path):
    monkeypatch.delenv(PROGRESS_FILE_ENV, raising=False)
    writer = ProgressWriter.from_environment()
    writer.update("partitions compacted", 1, 4)
    assert writer.path is None and list(tmp_path.iterdir()) == []


def test_updates_are_read_back_in_order_and_only_once(monkeypatch, tmp_path):
    path = tmp_path / "run.progress"
    monkeypatch.setenv(PROGRESS_FILE_ENV, str(path))
    writer, reader = ProgressWriter.from_environment(), ProgressReader(path)
    assert reader.new_events() == []  # no file yet
    writer.update("partitions compacted", 0, 4)
    writer.update("partitions compacted", 1, 4)
    assert reader.new_events() == [ProgressEvent("partitions compacted", 0, 4),
                                   ProgressEvent("partitions compacted", 1, 4)]
    writer.update("micro-batches", 7)
    assert reader.new_events() == [ProgressEvent("micro-batches", 7, None)]
    assert reader.new_events() == []


def test_a_half_written_line_waits_for_its_end_and_foreign_lines_are_skipped(tmp_path):
    path = tmp_path / "run.progress"
    reader = ProgressReader(path)
    path.write_text('not json\n{"step": "s", "done": "x"}\n{"step": "s", "do')
    assert reader.new_events() == []
    with open(path, "a") as file:
        file.write('ne": 2, "total": 3}\n')
    assert reader.new_events() == [ProgressEvent("s", 2, 3)]


def test_a_vanished_progress_directory_never_fails_the_job(tmp_path):
    writer = ProgressWriter(tmp_path / "gone" / "run.progress")
    writer.update("s", 1, 2)
    assert writer.path is None
