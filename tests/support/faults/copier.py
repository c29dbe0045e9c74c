"""The transactional copier (``tests.scenarios.durability.eos_copier``) kept running against a cluster.

:class:`CopierSupervisor` runs the copier program as a child process with
``--exit-when-caught-up`` and starts it again whenever it exits, from a
thread of its own, until it is told the input is complete
(:meth:`CopierSupervisor.finish`): the copy is done when an instance
started after that exits caught up (every input partition committed to its
end). An instance may exit earlier, caught up with an input still being
written, or failing: each exit is recorded (code, what the copier said),
and the next instance resumes from the committed offsets after fencing the
previous one, as the copier is built to.

It follows the copier's progress lines (``committed <n>``) and counts the
transactions it aborted (``aborting the transaction`` on its stderr). An
instance that exits because a client call stalled (``STALLED_EXIT``, a
known librdkafka defect after a coordinator bounce) is restarted like any
other but is not a failure: it is counted apart (:attr:`stalls`).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

COPIER_MODULE = "tests.scenarios.durability.eos_copier"
# The copier's status when a client call stalled (EX_TEMPFAIL): restarted, not a failure.
STALLED_EXIT = 75
RESTART_BACKOFF_S = 0.5
REPO = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class CopierExit:
    code: int
    caught_up: bool
    stderr_tail: str


@dataclass
class CopierSupervisor:
    bootstrap: str
    input_topic: str
    output_topic: str
    group: str
    transactional_id: str
    stderr_path: Path
    commit_records: int = 1000
    commit_ms: int = 100
    progress: int = 0
    exits: list[CopierExit] = field(default_factory=list)
    _input_complete_at: float | None = None
    _done: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _process: subprocess.Popen | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> CopierSupervisor:
        threading.Thread(target=self._supervise, name="copier-supervisor", daemon=True).start()
        return self

    def finish(self, timeout: float) -> None:
        """The input is complete: wait (bounded) for an instance started from now on to exit caught up."""
        with self._lock:
            self._input_complete_at = time.monotonic()
        if not self._done.wait(timeout):
            self.close()
            raise AssertionError(f"the copier did not catch up within {timeout:g}s of the input's end "
                                 f"(committed {self.progress}; exits {self.exits})")

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            process = self._process
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()

    @property
    def failures(self) -> list[CopierExit]:
        return [e for e in self.exits if e.code not in (0, STALLED_EXIT)]

    @property
    def stalls(self) -> list[CopierExit]:
        return [e for e in self.exits if e.code == STALLED_EXIT]

    def aborted_transactions(self) -> int:
        if not self.stderr_path.exists():
            return 0
        return self.stderr_path.read_text(errors="replace").count("aborting the transaction")

    # --- the supervising thread -----------------------------------------------------------

    def _supervise(self) -> None:
        while not self._stop.is_set():
            started_at = time.monotonic()
            process = self._launch()
            caught_up = self._follow(process)
            code = process.wait()
            if self._stop.is_set():
                return
            with self._lock:
                complete_at = self._input_complete_at
            if code == 0 and caught_up and complete_at is not None and started_at >= complete_at:
                self._done.set()
                return
            self.exits.append(CopierExit(code, caught_up, self._stderr_tail()))
            self._stop.wait(RESTART_BACKOFF_S)

    def _launch(self) -> subprocess.Popen:
        command = [
            sys.executable, "-m", COPIER_MODULE, "--bootstrap", self.bootstrap,
            "--input", self.input_topic, "--output", self.output_topic,
            "--group", self.group, "--transactional-id", self.transactional_id,
            "--commit-records", str(self.commit_records), "--commit-ms", str(self.commit_ms),
            "--exit-when-caught-up",
        ]
        with open(self.stderr_path, "ab") as stderr:
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=REPO)
        with self._lock:
            self._process = process
        return process

    def _follow(self, process: subprocess.Popen) -> bool:
        """Read the instance's progress lines until it exits; whether it said it caught up."""
        caught_up = False
        for line in process.stdout:
            event, _, count = line.strip().partition(" ")
            if event in ("committed", "caught-up") and count.isdigit():
                self.progress = int(count)
            caught_up = caught_up or event == "caught-up"
        return caught_up

    def _stderr_tail(self, lines: int = 10) -> str:
        if not self.stderr_path.exists():
            return ""
        return "\n".join(self.stderr_path.read_text(errors="replace").splitlines()[-lines:])
