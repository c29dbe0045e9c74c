"""The record of job runs: a JSON-lines file, ``<state dir>/jobs/runs.jsonl``.

Each run appends a ``started`` line and, when it ends, a ``finished`` line
with the exit code and duration (a runner killed outright leaves only the
first, shown as ``running`` or ``lost``). Lines are appended whole, so runs of
different jobs can share the file. The state directory is ``--state-dir``,
``$SPATE_STATE_DIR``, ``$XDG_STATE_HOME/spate`` or ``~/.local/state/spate``.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

STATE_DIR_ENV = "SPATE_STATE_DIR"


def default_state_dir() -> Path:
    if os.environ.get(STATE_DIR_ENV):
        return Path(os.environ[STATE_DIR_ENV])
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "spate"


@dataclass
class RunRecord:
    run_id: str
    job: str
    started: float  # seconds since the epoch
    command: list[str]
    pid: int
    finished: float | None = None
    exit_code: int | None = None

    @property
    def status(self) -> str:
        if self.exit_code is None:
            return "running" if _alive(self.pid) else "lost"
        return "succeeded" if self.exit_code == 0 else f"failed (exit {self.exit_code})"

    @property
    def duration_s(self) -> float | None:
        return None if self.finished is None else self.finished - self.started


class RunLog:
    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "jobs" / "runs.jsonl"

    def started(self, record: RunRecord) -> None:
        self._append({"event": "started", **asdict(record)})

    def finished(self, record: RunRecord) -> None:
        self._append({"event": "finished", "run_id": record.run_id, "job": record.job,
                      "finished": record.finished, "exit_code": record.exit_code})

    def runs(self) -> list[RunRecord]:
        """Every run, oldest first; unreadable lines (a torn last line) are skipped."""
        runs: dict[str, RunRecord] = {}
        if not self.path.exists():
            return []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
                if entry["event"] == "started":
                    fields = {k: entry[k] for k in ("run_id", "job", "started", "command", "pid")}
                    runs[entry["run_id"]] = RunRecord(**fields)
                elif entry["event"] == "finished" and entry["run_id"] in runs:
                    runs[entry["run_id"]].finished = entry["finished"]
                    runs[entry["run_id"]].exit_code = entry["exit_code"]
            except (ValueError, KeyError, TypeError):
                continue
        return list(runs.values())

    def last_runs(self) -> dict[str, RunRecord]:
        return {run.job: run for run in self.runs()}

    def _append(self, entry: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry, separators=(",", ":")) + "\n")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
