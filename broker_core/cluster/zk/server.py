"""Run a real Apache ZooKeeper server as a child process.

The server is ZooKeeper's own ``QuorumPeerMain`` (standalone, from the jars in
the pyspark wheel, see :mod:`broker_core.cluster.zk.server_files`) started
with ``java -cp <jars> QuorumPeerMain <data dir>/zoo.cfg``. Readiness is
ZooKeeper's four-letter words: ``ruok`` answered ``imok`` and ``srvr`` naming
the server's mode (it is serving clients).

Every failure to start is one :class:`ZooKeeperServerError` with a one-line
message: no Java, missing jars, the port taken, or the process exiting or
staying silent. Stopping sends SIGTERM (ZooKeeper shuts down cleanly and its
data directory stays consistent), then SIGKILL after a bound. A stopped
server restarts on the same data directory with its znodes and sessions, so
clients that reconnect within their session timeout keep their ephemeral
znodes.
"""

from __future__ import annotations

import logging
import socket
import subprocess
import time
from pathlib import Path
from typing import IO, Sequence

from broker_core.cluster.zk.errors import ZooKeeperServerError
from broker_core.cluster.zk.server_files import (
    MAIN_CLASS,
    ZooKeeperServerConfig,
    find_java,
    zookeeper_classpath,
)

logger = logging.getLogger(__name__)

DEFAULT_JVM_OPTIONS = ("-Xmx512m", "-XX:+UseSerialGC", "-Dzookeeper.jmx.log4j.disable=true")
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
_POLL_INTERVAL_S = 0.05


def four_letter_word(host: str, port: int, word: str, timeout_s: float = 2.0) -> str:
    """Send one of ZooKeeper's four-letter words and return the whole answer (``ruok`` → ``imok``)."""
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.sendall(word.encode("ascii"))
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


def check_port_free(host: str, port: int) -> None:
    """Fail if something already listens on ``host:port`` (bound the way ZooKeeper binds: reuse allowed)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise ZooKeeperServerError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


class ZooKeeperServer:
    """One standalone ZooKeeper server process.

    ``log_path`` receives the server's output (appended); with ``None`` the
    process writes to this process's stderr. ``java`` and ``jars_dir``
    override the Java runtime and the jar directory (defaults: ``$JAVA_HOME``
    or ``PATH``, and pyspark's jars).

    Not thread-safe: one owner starts and stops it.
    """

    def __init__(
        self,
        config: ZooKeeperServerConfig,
        *,
        log_path: Path | None = None,
        java: str | None = None,
        jars_dir: Path | None = None,
        jvm_options: Sequence[str] = DEFAULT_JVM_OPTIONS,
    ) -> None:
        self.config = config
        self.log_path = log_path
        self._java = java
        self._jars_dir = jars_dir
        self._jvm_options = tuple(jvm_options)
        self._process: subprocess.Popen[bytes] | None = None

    # --- lifecycle ------------------------------------------------------------------

    def start(self, timeout_s: float = START_TIMEOUT_S) -> ZooKeeperServer:
        """Start the process and wait until it serves; raises :class:`ZooKeeperServerError`."""
        if self.running:
            raise ZooKeeperServerError(f"ZooKeeper on {self.connect_string} is already running")
        command = self.command()
        check_port_free(self.config.host, self.config.port)
        self.config.write_files()
        output = self._open_log()
        try:
            self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=output, stderr=output)
        except OSError as exc:
            raise ZooKeeperServerError(f"cannot run {command[0]}: {exc.strerror or exc}") from None
        finally:
            if output is not None:
                output.close()
        try:
            self.wait_until_ready(timeout_s)
        except BaseException:
            self.stop()
            raise
        logger.info("ZooKeeper serving on %s (data in %s)", self.connect_string, self.config.data_dir)
        return self

    def command(self) -> list[str]:
        """The ``java`` command line; raises :class:`ZooKeeperServerError` if Java or a jar is missing."""
        java = find_java(self._java)
        classpath = ":".join(str(jar) for jar in zookeeper_classpath(self._jars_dir))
        return [
            java,
            *self._jvm_options,
            *self.config.jvm_system_properties(),
            f"-Dlog4j2.configurationFile={self.config.log_config_path.resolve()}",
            "-cp",
            classpath,
            MAIN_CLASS,
            str(self.config.config_path.resolve()),
        ]

    def wait_until_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            code = self._process.poll() if self._process is not None else None
            if self._process is None or code is not None:
                raise ZooKeeperServerError(self._exit_reason(code))
            if self.is_serving():
                return
            if time.monotonic() >= deadline:
                raise ZooKeeperServerError(f"ZooKeeper on {self.connect_string} was not serving within {timeout_s:g}s")
            time.sleep(_POLL_INTERVAL_S)

    def is_serving(self) -> bool:
        """True when the server answers ``ruok`` with ``imok`` and ``srvr`` with its mode.

        ``imok`` alone only says the process runs: until its database is
        loaded, ``srvr`` answers "not currently serving requests" and client
        connections are dropped.
        """
        host, port = self.config.host, self.config.port
        try:
            if four_letter_word(host, port, "ruok", 1.0) != "imok":
                return False
            return "Mode: " in four_letter_word(host, port, "srvr", 1.0)
        except OSError:
            return False

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> int | None:
        """SIGTERM, wait up to ``timeout_s``, then SIGKILL; returns the exit code (``None`` if never started)."""
        process = self._process
        if process is None:
            return None
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                logger.warning("ZooKeeper on %s ignored SIGTERM for %gs; killing it", self.connect_string, timeout_s)
                process.kill()
                process.wait()
        return process.returncode

    def terminate(self) -> None:
        """Send SIGTERM without waiting (for signal handlers); :meth:`stop` finishes the job."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()

    def restart(self, timeout_s: float = START_TIMEOUT_S) -> ZooKeeperServer:
        """Stop, then start again on the same port and data directory."""
        self.stop()
        self._process = None
        return self.start(timeout_s)

    def wait(self, timeout_s: float | None = None) -> int | None:
        """The exit code once the process ends, or ``None`` if it still runs after ``timeout_s``."""
        if self._process is None:
            return None
        try:
            return self._process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None

    # --- state ------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def connect_string(self) -> str:
        return self.config.connect_string

    def log_tail(self, lines: int = 20) -> list[str]:
        if self.log_path is None or not self.log_path.exists():
            return []
        return self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]

    def __enter__(self) -> ZooKeeperServer:
        return self.start() if not self.running else self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # --- internals --------------------------------------------------------------------

    def _open_log(self) -> IO[bytes] | None:
        if self.log_path is None:
            return None
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            return open(self.log_path, "ab")
        except OSError as exc:
            raise ZooKeeperServerError(f"cannot open {self.log_path}: {exc.strerror or exc}") from None

    def _exit_reason(self, code: int | None) -> str:
        tail = self.log_tail(50)
        if any("Address already in use" in line for line in tail):
            return f"cannot listen on {self.connect_string}: address already in use"
        problems = [line for line in tail if " ERROR " in line or " WARN " in line]
        detail = f": {problems[-1].strip()}" if problems else " (see its log)"
        return f"ZooKeeper exited with code {code} while starting{detail}"
