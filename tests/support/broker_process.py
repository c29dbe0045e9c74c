"""Broker processes for integration tests: start, wait until ready, stop, kill, restart, read the log.

``BrokerProcess`` is one ``spate broker start`` child process on 127.0.0.1
(``TansuProcess`` is the same surface for the Tansu oracle). A broker that
several tests share runs inside ``running_broker``, which fails the tests'
teardown with the tail of the broker's log if the broker died meanwhile:
nothing stops a shared broker on purpose.
"""

from __future__ import annotations

import gc
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from tests.support.ports import free_port


class BrokerDiedError(AssertionError):
    """The broker process exited although nothing stopped it; the message ends with its log tail."""


@dataclass
class BrokerProcess:
    """One ``spate broker start`` child process on 127.0.0.1, its output in ``data_dir/broker.log``."""

    kind: ClassVar[str] = "spate"

    data_dir: Path
    port: int = field(default_factory=free_port)
    overrides: dict[str, str] = field(default_factory=dict)
    log_path: Path | None = None
    process: subprocess.Popen | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log_dir(self) -> Path:
        """The broker's ``log.dirs``: where its partitions live."""
        return self.data_dir / "logs"

    @property
    def exit_code(self) -> int | None:
        """The code the process exited with; None while it runs, or before it was started."""
        return None if self.process is None else self.process.poll()

    def command(self) -> list[str]:
        settings = {
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "log.dirs": str(self.log_dir),
            **self.overrides,
        }
        cmd = [sys.executable, "-m", "spate.cli.main", "broker", "start"]
        for key, value in settings.items():
            cmd += ["--override", f"{key}={value}"]
        return cmd

    def start(self, timeout: float = 30.0) -> BrokerProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.data_dir / "broker.log"
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"}
            )
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.exit_code is not None:
                raise RuntimeError(f"broker exited with {self.exit_code}:\n{self.log_tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise TimeoutError(f"broker on port {self.port} not ready after {timeout}s:\n{self.log_tail()}")

    def check_alive(self) -> None:
        """Raise BrokerDiedError, with the log tail, if the process has exited."""
        code = self.exit_code
        if code is not None:
            raise BrokerDiedError(f"the broker exited with {code}:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM and wait: the clean shutdown path. Kills and raises if the broker ignores it."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise RuntimeError(f"broker ignored SIGTERM for {timeout}s:\n{self.log_tail()}")

    def kill(self) -> None:
        """SIGKILL: the crash path."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def restart(self, *, clean: bool = True) -> BrokerProcess:
        """Stop (SIGTERM when ``clean``, else SIGKILL) and start again on the same port and data."""
        self.stop() if clean else self.kill()
        return self.start()


@contextmanager
def running_broker(broker: BrokerProcess) -> Iterator[BrokerProcess]:
    """Start ``broker`` for the tests that share it; stop it afterwards.

    Raises BrokerDiedError, with the log tail, if the broker had exited before
    the end; the tests that ran on it then fail their teardown.
    """
    broker.start()
    try:
        yield broker
    except BaseException:
        broker.kill()
        raise
    # Client handles that outlived their tests would keep reconnecting to the stopped broker.
    gc.collect()
    code = broker.exit_code
    broker.stop()
    if code is not None:
        raise BrokerDiedError(f"the broker exited with {code} while the tests ran:\n{broker.log_tail()}")
