"""Progress bars for a job run by ``spate jobs run``: one per step the job reports (:mod:`spate.job_progress`).

A thread polls the job's progress file a few times a second and moves a
rich bar per step (a spinner with a count where the total is unknown). The
bars are drawn only on a terminal; under cron or systemd the job's own
output lines are the record, so nothing is added to them.
"""

from __future__ import annotations

import threading
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

from spate.job_progress import ProgressEvent, ProgressReader

POLL_INTERVAL_S = 0.25


class ProgressFollower:
    def __init__(self, path: Path, console: Console) -> None:
        self._reader = ProgressReader(path)
        self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                  MofNCompleteColumn(), TimeElapsedColumn(), console=console)
        self._tasks: dict[str, TaskID] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="job-progress", daemon=True)

    def start(self) -> ProgressFollower:
        self._progress.start()
        self._thread.start()
        return self

    def stop(self) -> None:
        """Show the last events, then leave the bars as they ended."""
        self._stop.set()
        self._thread.join(timeout=5)
        self.apply(self._reader.new_events())
        self._progress.stop()

    def apply(self, events: list[ProgressEvent]) -> None:
        for event in events:
            task = self._tasks.get(event.step)
            if task is None:
                task = self._tasks[event.step] = self._progress.add_task(event.step, total=event.total)
            self._progress.update(task, completed=event.done, total=event.total)

    def steps(self) -> dict[str, tuple[float, float | None]]:
        """Each step's (done, total) as drawn."""
        return {task.description: (task.completed, task.total) for task in self._progress.tasks}

    def _run(self) -> None:
        while not self._stop.wait(POLL_INTERVAL_S):
            self.apply(self._reader.new_events())
