"""`spate broker start`: configuration errors, the garbage-collector policy, and retention running on its interval."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.broker_process import BrokerProcess
from tests.support.ports import free_port


def start_with(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "spate.cli.main", "broker", "start", *args],
        capture_output=True, text=True, timeout=30, env=None if env is None else {**os.environ, **env},
    )


@pytest.mark.parametrize(
    "args, named",
    [
        (["--override", "log.segment.bites=100"], "log.segment.bites"),
        (["--override", "num.partitions=many"], "num.partitions"),
        (["--override", "listeners=PLAINTEXT://127.0.0.1:notaport"], "listeners"),
        (["--config", "/nonexistent/broker.properties"], "/nonexistent/broker.properties"),
        (["--override", "listeners=CLIENT://127.0.0.1:0", "--override", "listener.security.protocol.map=CLIENT:PLAINTEXT",
          "--override", "inter.broker.listener.name=REPLICATION"], "inter.broker.listener.name"),
        (["--override", "listeners=PLAINTEXT://127.0.0.1:0,SECURE://127.0.0.1:0",
          "--override", "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SECURE:SSL"], "listener SECURE"),
    ],
    ids=["unknown-key", "malformed-number", "malformed-listener", "missing-file", "unknown-inter-broker-listener",
         "ssl-listener"],
)
def test_bad_configuration_stops_the_start_with_one_line_naming_the_culprit(args, named):
    result = start_with(*args)
    assert result.returncode == 1
    assert named in result.stderr
    assert "Traceback" not in result.stderr


def test_a_malformed_properties_file_is_reported_with_its_line(tmp_path):
    config = tmp_path / "broker.properties"
    config.write_text(f"listeners=PLAINTEXT://127.0.0.1:{free_port()}\nlog.retention.hours=soon\n")
    result = start_with("--config", str(config))
    assert result.returncode == 1
    assert "log.retention.hours" in result.stderr and "2" in result.stderr


def test_a_bad_gc_policy_stops_the_start_naming_the_variable():
    result = start_with("--override", f"listeners=PLAINTEXT://127.0.0.1:{free_port()}", env={"SPATE_GC": "fast"})
    assert result.returncode == 1
    assert "SPATE_GC='fast'" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_started_broker_freezes_its_start_up_heap_and_says_so(tmp_path):
    broker = BrokerProcess(tmp_path).start()
    try:
        # Applied right after the listeners open, so the line may follow the broker's readiness.
        deadline, lines = time.monotonic() + 15, []
        while not lines and time.monotonic() < deadline:
            lines = [line for line in broker.log_path.read_text().splitlines() if "garbage collector" in line]
            time.sleep(0.05)
    finally:
        broker.stop()
    assert lines, "the broker never logged its garbage-collector policy"
    line = lines[0]
    assert "server policy" in line and "thresholds (5000, 10, 10)" in line
    assert int(line.split("(")[1].split(" objects")[0]) > 10_000  # modules, config, the broker's objects


def test_retention_deletes_old_segments_on_its_interval(tmp_path):
    broker = BrokerProcess(
        tmp_path,
        overrides={
            "log.segment.bytes": "2000",
            "log.retention.ms": "1000",
            "log.retention.check.interval.ms": "200",
            "log.segment.delete.delay.ms": "0",
        },
    ).start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("aging", 1, 1)])["aging"].result(10)
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
        old = int(time.time() * 1000) - 60_000
        for i in range(50):
            producer.produce("aging", value=b"x" * 200, timestamp=old)
            producer.flush(10)
        log_dir = tmp_path / "logs" / "aging-0"
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and len(list(log_dir.glob("*.log"))) > 1:
            time.sleep(0.2)
        remaining = sorted(p.name for p in log_dir.glob("*.log"))
        assert len(remaining) == 1, remaining
        assert remaining[0] != "00000000000000000000.log"
    finally:
        broker.stop()
