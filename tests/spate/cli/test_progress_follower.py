"""``spate jobs run`` draws a bar per step the job reports."""

from __future__ import annotations

import io
import time

from rich.console import Console

from spate.cli.progress_follower import ProgressFollower
from spate.job_progress import ProgressEvent, ProgressWriter


def terminal() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=100), out


def test_each_step_gets_a_bar_that_follows_its_latest_count(tmp_path):
    console, out = terminal()
    follower = ProgressFollower(tmp_path / "run.progress", console)
    follower.apply([ProgressEvent("partitions compacted", 1, 4), ProgressEvent("micro-batches", 3),
                    ProgressEvent("partitions compacted", 3, 4)])
    assert follower.steps() == {"partitions compacted": (3, 4), "micro-batches": (3, None)}


def test_the_follower_reads_what_the_job_writes_while_it_runs(tmp_path):
    console, out = terminal()
    path = tmp_path / "run.progress"
    follower = ProgressFollower(path, console).start()
    try:
        ProgressWriter(path).update("partitions archived", 2, 5)
        deadline = time.monotonic() + 10
        while follower.steps().get("partitions archived") != (2, 5) and time.monotonic() < deadline:
            time.sleep(0.05)
        ProgressWriter(path).update("partitions archived", 5, 5)
    finally:
        follower.stop()
    assert follower.steps() == {"partitions archived": (5, 5)}
    assert "partitions archived" in out.getvalue() and "5/5" in out.getvalue()
