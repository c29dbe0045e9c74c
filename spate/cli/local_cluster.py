"""A cluster on this machine: ZooKeeper and N brokers as child processes of one command.

Each child is the ``spate`` command itself (``python -m spate.cli.main
zookeeper start ...`` and ``... broker start --override ...``), so this module
starts processes and never loads the broker's code. Under the data directory:

* ``zookeeper/`` ZooKeeper's data, ``broker-<i>/`` the ``log.dirs`` of broker ``i``;
* ``<name>.log`` each child's output (stdout and stderr), truncated at start.

Broker ``i`` has ``broker.id=i`` and listens on ``127.0.0.1:<base port + i>``
(PLAINTEXT, or SASL_SSL with ``secure``: see :mod:`spate.cli.secure_cluster`).
Children run in sessions of their own, so a Ctrl-C at the terminal reaches
only the parent, which stops the brokers first (SIGTERM, a bounded wait, then
SIGKILL) and ZooKeeper last. A parent killed with SIGKILL leaves them running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from spate.cli.errors import CliError
from spate.cli.secure_cluster import SecureSetup, store_admin_credential
from spate.client import Admin, ClientError, KafkaError

# What ``spate zookeeper start`` prints once its server answers.
ZOOKEEPER_SERVING = "ZooKeeper serving on"
LOG_TAIL_LINES = 20
_POLL_S = 0.2
# One Metadata probe of a starting broker: short, so a dead child is noticed quickly.
_PROBE_TIMEOUT_MS = 1_000


@dataclass
class ChildProcess:
    """One child of the cluster, its output in ``log_path``."""

    name: str
    command: list[str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    reported: bool = False  # its unexpected exit was told already

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"}, start_new_session=True,
            )

    @property
    def exit_code(self) -> int | None:
        """None while it runs (or before it started)."""
        return None if self.process is None else self.process.poll()

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def signal(self, signum: int) -> None:
        if self.running:
            try:
                self.process.send_signal(signum)  # type: ignore[union-attr]
            except ProcessLookupError:
                pass  # it exited meanwhile


@dataclass
class LocalCluster:
    data_dir: Path
    brokers: int
    base_port: int
    zookeeper_port: int
    overrides: list[str] = field(default_factory=list)
    python: str = sys.executable
    # --monitoring: broker i serves GET /metrics on 127.0.0.1:<metrics_ports[i]>.
    metrics_ports: list[int] = field(default_factory=list)
    # --secure: a SASL_SSL listener and the admin user, whose settings the cluster's own clients use.
    secure: SecureSetup | None = None

    def __post_init__(self) -> None:
        self.zookeeper = ChildProcess(
            "zookeeper",
            self._spate("zookeeper", "start", "--port", str(self.zookeeper_port),
                        "--data-dir", str(self.data_dir / "zookeeper"), "--host", "127.0.0.1",
                        *(("--jaas-config", str(self.secure.zookeeper_jaas)) if self.secure is not None else ())),
            self.data_dir / "zookeeper.log",
        )
        self.broker_processes = [
            ChildProcess(f"broker-{i}", self._broker_command(i), self.data_dir / f"broker-{i}.log")
            for i in range(self.brokers)
        ]

    def _spate(self, *args: str) -> list[str]:
        return [self.python, "-m", "spate.cli.main", *args]

    def _broker_command(self, broker_id: int) -> list[str]:
        settings = [
            f"broker.id={broker_id}",
            f"zookeeper.connect=127.0.0.1:{self.zookeeper_port}",
            *(self.secure.broker_settings(self.base_port + broker_id) if self.secure is not None
              else [f"listeners=PLAINTEXT://127.0.0.1:{self.base_port + broker_id}"]),
            f"log.dirs={self.data_dir / f'broker-{broker_id}'}",
            *([f"metrics.http.listener=http://127.0.0.1:{self.metrics_ports[broker_id]}"]
              if self.metrics_ports else []),
            *self.overrides,
        ]
        return self._spate("broker", "start", *(arg for s in settings for arg in ("--override", s)))

    @property
    def client_settings(self) -> dict[str, str]:
        """Security settings for a client of this cluster (none on PLAINTEXT)."""
        return self.secure.client_settings() if self.secure is not None else {}

    @property
    def children(self) -> list[ChildProcess]:
        return [self.zookeeper, *self.broker_processes]

    def address(self, broker_id: int) -> str:
        return f"127.0.0.1:{self.base_port + broker_id}"

    @property
    def bootstrap(self) -> str:
        return ",".join(self.address(i) for i in range(self.brokers))

    # --- start ---------------------------------------------------------------------------------

    def start(self, deadline: float, stopping: Callable[[], bool],
              on_progress: Callable[[int, int], None] | None = None) -> bool:
        """Start ZooKeeper, then the brokers; True once every broker answers Metadata.

        False if ``stopping()`` turned true meanwhile. A child that exits, or a
        deadline that passes, raises CliError with the end of the child's log.
        ``on_progress(ready, total)`` hears of each child ready (ZooKeeper, then each broker).
        """
        report = on_progress or (lambda ready, total: None)
        total = 1 + len(self.broker_processes)
        report(0, total)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.zookeeper.start()
        if not self._wait(lambda: ZOOKEEPER_SERVING in self.zookeeper.log_text(), [self.zookeeper], deadline,
                          stopping, "ZooKeeper to serve"):
            return False
        if self.secure is not None:  # the brokers log in to each other as the admin user
            store_admin_credential(f"127.0.0.1:{self.zookeeper_port}", self.secure)
        report(1, total)
        for broker in self.broker_processes:
            broker.start()
        waiting = dict(enumerate(self.broker_processes))

        def all_answer() -> bool:
            answered = [i for i in waiting if _answers_metadata(self.address(i), self.client_settings)]
            for broker_id in answered:
                del waiting[broker_id]
            if answered:
                report(total - len(waiting), total)
            return not waiting

        return self._wait(all_answer, self.children, deadline, stopping,
                          lambda: ", ".join(b.name for b in waiting.values()) + " to answer Metadata",
                          culprit=lambda: next(iter(waiting.values()), None))

    def _wait(
        self,
        done: Callable[[], bool],
        watched: list[ChildProcess],
        deadline: float,
        stopping: Callable[[], bool],
        what: str | Callable[[], str],
        culprit: Callable[[], ChildProcess | None] | None = None,
    ) -> bool:
        while not stopping():
            for child in watched:
                if child.exit_code is not None:
                    raise CliError(self._died(child))
            if done():
                return True
            if time.monotonic() >= deadline:
                waited = what() if callable(what) else what
                late = culprit() if culprit is not None else watched[0]
                tail = f"; the end of {late.log_path}:\n{_indented(late.log_tail())}" if late is not None else ""
                raise CliError(f"timed out waiting for {waited}{tail}")
            time.sleep(_POLL_S)
        return False

    @staticmethod
    def _died(child: ChildProcess) -> str:
        return (f"{child.name} exited with code {child.exit_code} during start-up; "
                f"the end of {child.log_path}:\n{_indented(child.log_tail())}")

    # --- stop ----------------------------------------------------------------------------------

    def stop(self, timeout: float) -> list[str]:
        """Brokers first, then ZooKeeper: SIGTERM, up to ``timeout`` seconds each step, then SIGKILL.

        Returns the names of the children that had to be killed.
        """
        killed = _terminate(self.broker_processes, timeout)
        killed += _terminate([self.zookeeper], timeout)
        return killed


def _terminate(children: list[ChildProcess], timeout: float) -> list[str]:
    for child in children:
        child.signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    killed = []
    for child in children:
        if child.process is None:
            continue
        try:
            child.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.signal(signal.SIGKILL)
            child.process.wait()
            killed.append(child.name)
    return killed


def _answers_metadata(address: str, settings: dict[str, str]) -> bool:
    try:
        with Admin(address, default_api_timeout_ms=_PROBE_TIMEOUT_MS, request_timeout_ms=_PROBE_TIMEOUT_MS,
                   connect_timeout_ms=_PROBE_TIMEOUT_MS, client_id="spate-cluster-up", **settings) as admin:
            admin.list_topics(include_internal=True)
        return True
    except (ClientError, KafkaError):
        return False


def _indented(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines()) or "  (empty)"
