"""``spate doctor``: one line per check, a fix for each failure, exit 1 on failure, --output json."""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from spate.cli.doctor import DEFAULT_LISTENERS, DEFAULT_LOG_DIR, broker_settings
from spate.cli.doctor_checks import (
    check_broker,
    check_java,
    check_log_dir,
    check_port,
    check_pyspark,
    check_spark_finds_spate,
    check_zookeeper,
    java_major_version,
    listener_address,
)
from tests.spate.cli.conftest import spate
from tests.support.ports import free_port


@pytest.fixture
def occupied_port() -> Iterator[int]:
    """A port something that is not a broker listens on (it accepts, then says nothing)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


def fake_java(tmp_path: Path, version_line: str) -> str:
    path = tmp_path / "java"
    path.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_java_versions_are_read_in_both_numbering_schemes():
    assert java_major_version('openjdk version "17.0.15" 2025-04-15') == 17
    assert java_major_version('openjdk version "21" 2023-09-19') == 21
    assert java_major_version('java version "1.8.0_392"') == 8
    assert java_major_version("no version here") is None


def test_java_17_passes_and_older_java_fails_with_a_fix(tmp_path):
    assert check_java(fake_java(tmp_path, 'openjdk version "17.0.2" 2022-01-18')).ok
    old = check_java(fake_java(tmp_path, 'openjdk version "11.0.20" 2023-07-18'))
    assert not old.ok and "Java 11" in old.detail and "17" in old.fix


def test_a_missing_java_fails_with_a_fix(tmp_path, monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    check = check_java()
    assert not check.ok and "JAVA_HOME" in check.fix


def test_pyspark_is_importable_with_its_version():
    import pyspark

    check = check_pyspark()
    assert check.ok and pyspark.__version__ in check.detail


def test_spark_finds_spate_when_the_module_is_on_the_scan_and_workers_have_a_python():
    assert check_spark_finds_spate({"pyspark_spate", "os"}, "/venv/bin/python").ok
    hidden = check_spark_finds_spate({"os"}, "/venv/bin/python")
    assert not hidden.ok and "platform/setup.sh" in hidden.fix
    unset = check_spark_finds_spate({"pyspark_spate"}, "")
    assert not unset.ok and "PYSPARK_PYTHON" in unset.detail


def test_listeners_name_their_address():
    assert listener_address("PLAINTEXT://127.0.0.1:9092") == ("127.0.0.1", 9092)
    assert listener_address("CLIENT://:9093") == ("0.0.0.0", 9093)
    assert listener_address("http://127.0.0.1:9404") == ("127.0.0.1", 9404)


def test_a_free_port_passes_and_a_port_taken_by_another_program_fails(occupied_port):
    assert check_port("listeners", "127.0.0.1", free_port()).ok
    taken = check_port("listeners", "127.0.0.1", occupied_port, timeout_s=1.0)
    assert not taken.ok and str(occupied_port) in taken.fix and "listeners" in taken.fix


def test_a_port_served_by_a_running_broker_passes(bootstrap):
    host, port = bootstrap.split(":")
    check = check_port("listeners", host, int(port))
    assert check.ok and "running broker" in check.detail


def test_log_dirs_are_checked_for_space_and_permissions(tmp_path, monkeypatch):
    assert check_log_dir(tmp_path).ok
    assert "to be created" in check_log_dir(tmp_path / "new" / "logs").detail
    crowded = check_log_dir(tmp_path, min_free_bytes=1 << 62)
    assert not crowded.ok and "free space" in crowded.fix
    (tmp_path / "file").write_text("")
    assert not check_log_dir(tmp_path / "file").ok
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    locked = check_log_dir(tmp_path)
    assert not locked.ok and "not writable" in locked.detail and "chown" in locked.fix


def test_zookeeper_is_reachable_when_any_server_accepts(occupied_port):
    closed = free_port()
    assert check_zookeeper(f"127.0.0.1:{closed},127.0.0.1:{occupied_port}/spate").ok
    down = check_zookeeper(f"127.0.0.1:{closed}", timeout_s=1.0)
    assert not down.ok and "spate zookeeper start" in down.fix


def test_a_running_broker_shows_its_listeners_and_api_versions(bootstrap):
    cluster, apis = check_broker(bootstrap)
    assert cluster.ok and bootstrap in cluster.detail
    assert apis.ok and "Produce v" in apis.detail and "Fetch v" in apis.detail


def test_an_absent_broker_fails_with_a_fix():
    (check,) = check_broker(f"127.0.0.1:{free_port()}", timeout_s=1.0)
    assert not check.ok and "spate broker start" in check.fix


def test_the_command_passes_on_a_ready_machine_one_line_per_check(tmp_path, monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)  # what the setup's .pth does in a venv
    result = spate("doctor", "--override", f"listeners=PLAINTEXT://127.0.0.1:{free_port()}",
                   "--override", f"log.dirs={tmp_path}")
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["ok   java", "ok   pyspark", "ok   spark data source",
                                                      "ok   port listeners", f"ok   log dir {tmp_path}"]


def test_the_command_fails_naming_the_fix_and_reports_json(tmp_path, occupied_port, bootstrap):
    result = spate("doctor", "--output", "json", "--bootstrap-server", bootstrap,
                   "--override", f"listeners=PLAINTEXT://127.0.0.1:{occupied_port}",
                   "--override", f"log.dirs={tmp_path}",
                   "--override", f"zookeeper.connect=127.0.0.1:{free_port()}")
    assert result.returncode == 1, result
    document = json.loads(result.stdout)
    by_name = {check["check"]: check for check in document["checks"]}
    assert document["ok"] is False
    assert not by_name["port listeners"]["ok"] and by_name["port listeners"]["fix"]
    assert not by_name["zookeeper"]["ok"] and by_name["zookeeper"]["fix"]
    assert by_name["broker"]["ok"] and by_name["broker apis"]["ok"]


def test_a_missing_configuration_file_is_one_line_on_stderr(tmp_path):
    result = spate("doctor", "--config", str(tmp_path / "missing.properties"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "missing.properties" in result.stderr


def test_settings_come_from_the_file_then_the_overrides(tmp_path):
    path = tmp_path / "broker.properties"
    path.write_text("# comment\nlisteners=PLAINTEXT://127.0.0.1:19092\nlog.dirs: /a,/b\nzookeeper.connect=zk:2181\n")
    settings = broker_settings(path, ["zookeeper.connect=other:2181"])
    assert settings == {"listeners": "PLAINTEXT://127.0.0.1:19092", "log.dirs": "/a,/b",
                        "zookeeper.connect": "other:2181"}


def test_the_defaults_are_the_brokers():
    from broker_core.config.broker_config import BrokerConfig

    config = BrokerConfig.from_properties({})
    assert config.get_list("listeners") == (DEFAULT_LISTENERS,)
    assert [str(path) for path in config.log_dirs] == [DEFAULT_LOG_DIR]
