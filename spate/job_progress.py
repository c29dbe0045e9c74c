"""How far a running job has come: steps with a count done out of a total, as JSON lines in a file.

A job started by ``spate jobs run`` finds the file's path in
``$SPATE_JOB_PROGRESS_FILE`` and appends one line per update::

    {"step": "partitions compacted", "done": 3, "total": 10}

``total`` is null while unknown (a streaming job counting batches). The
runner follows the file and draws a progress bar per step on a terminal. A
job started any other way (plain ``spark-submit``, cron without the runner)
has no such variable and reports nothing: :class:`ProgressWriter` is then
a no-op, so jobs call it unconditionally.

Jobs update per partition or per micro-batch, never per record, so the file
stays small and the writes cost nothing next to the work they describe.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

PROGRESS_FILE_ENV = "SPATE_JOB_PROGRESS_FILE"


@dataclass(frozen=True)
class ProgressEvent:
    step: str
    done: int
    total: int | None = None

    def to_line(self) -> str:
        return json.dumps({"step": self.step, "done": self.done, "total": self.total}) + "\n"

    @classmethod
    def from_line(cls, line: str) -> ProgressEvent | None:
        """The event of one line, or None for a line that is not one (a torn write, a foreign line)."""
        try:
            fields = json.loads(line)
            step, done, total = fields["step"], fields["done"], fields.get("total")
        except (ValueError, TypeError, KeyError):
            return None
        if not isinstance(step, str) or not isinstance(done, int) or not (total is None or isinstance(total, int)):
            return None
        return cls(step, done, total)


class ProgressWriter:
    """Appends a job's progress to the runner's file; does nothing when no runner asked for it."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    @classmethod
    def from_environment(cls) -> ProgressWriter:
        value = os.environ.get(PROGRESS_FILE_ENV)
        return cls(Path(value) if value else None)

    def update(self, step: str, done: int, total: int | None = None) -> None:
        if self.path is None:
            return
        try:
            # One whole line per write in append mode, so a follower never reads half an event it keeps.
            with open(self.path, "a", encoding="utf-8") as file:
                file.write(ProgressEvent(step, done, total).to_line())
        except OSError:
            # Progress is for the eyes only: a job never fails because its progress file went away.
            self.path = None


class ProgressReader:
    """Reads the events appended to a progress file since the last call."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._partial = ""

    def new_events(self) -> list[ProgressEvent]:
        try:
            with open(self.path, encoding="utf-8") as file:
                file.seek(self._offset)
                text = file.read()
                self._offset = file.tell()
        except FileNotFoundError:
            return []
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()  # an unfinished last line waits for the rest of it
        return [event for event in map(ProgressEvent.from_line, lines) if event is not None]
