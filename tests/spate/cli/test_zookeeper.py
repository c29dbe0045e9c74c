"""``spate zookeeper start`` as a user runs it: a foreground server that stops cleanly, or one line saying why not."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from broker_core.cluster.zk.server import four_letter_word
from tests.support.ports import free_port
from tests.support.zookeeper import wait_until

STOP_TIMEOUT_S = 20


def start_command(data_dir: Path, port: int, env: dict[str, str] | None = None, stderr=subprocess.PIPE):
    return subprocess.Popen(
        [sys.executable, "-m", "spate.cli.main", "zookeeper", "start", "--port", str(port), "--data-dir", str(data_dir)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr, env=env,
    )  # fmt: skip


def serving(port: int) -> bool:
    try:
        return "Mode: standalone" in four_letter_word("127.0.0.1", port, "srvr", timeout_s=1.0)
    except OSError:
        return False


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_start_serves_until_a_signal_then_exits_zero(tmp_path: Path, stop_signal: signal.Signals) -> None:
    port = free_port()
    log = tmp_path / "stderr.log"
    with open(log, "wb") as stderr:
        process = start_command(tmp_path / "zk", port, stderr=stderr)
    try:
        wait_until(lambda: serving(port) or process.poll() is not None, "ZooKeeper to serve", timeout_s=60)
        assert process.poll() is None, log.read_text()
        assert four_letter_word("127.0.0.1", port, "ruok") == "imok"
        wait_until(lambda: "ZooKeeper serving on 127.0.0.1:" in log.read_text(), "the serving line")
        process.send_signal(stop_signal)
        assert process.wait(STOP_TIMEOUT_S) == 0, log.read_text()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert not serving(port)
    assert (tmp_path / "zk" / "version-2").is_dir()


def test_without_java_it_is_one_line_and_exit_one(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "JAVA_HOME"}
    env["PATH"] = str(tmp_path)  # nothing there, java least of all
    process = start_command(tmp_path / "zk", free_port(), env=env)
    _, stderr = process.communicate(timeout=60)
    lines = stderr.decode().strip().splitlines()
    assert process.returncode == 1
    assert len(lines) == 1, lines
    assert lines[0].startswith("spate: no Java runtime: 'java' is not on PATH")


def test_a_taken_port_is_one_line_and_exit_one(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = start_command(tmp_path / "zk", port)
        _, stderr = process.communicate(timeout=60)
    lines = stderr.decode().strip().splitlines()
    assert process.returncode == 1
    assert lines == [f"spate: cannot listen on 127.0.0.1:{port}: Address already in use"]


def test_a_bad_port_is_a_usage_error(tmp_path: Path) -> None:
    process = start_command(tmp_path / "zk", 70000)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 2
    assert "a port is between 1 and 65535" in stderr.decode()


def test_a_missing_jaas_config_is_one_line_and_exit_one(tmp_path: Path) -> None:
    absent = tmp_path / "absent_jaas.conf"
    process = subprocess.Popen(
        [sys.executable, "-m", "spate.cli.main", "zookeeper", "start", "--port", str(free_port()),
         "--data-dir", str(tmp_path / "zk"), "--jaas-config", str(absent)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1
    assert stderr.decode().strip().splitlines() == [f"spate: --jaas-config: JAAS file {absent} does not exist"]
