"""The scheduling recipes under ``platform/``: each cron line and systemd service runs a registered job through
``spate jobs run NAME --bootstrap-server ...``, each timer starts its service, and the runner takes the arguments
they pass (checked with ``--dry-run`` and a stand-in spark-submit)."""

from __future__ import annotations

import configparser
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from spate.cli.job_registry import JOBS

REPO = Path(__file__).resolve().parents[2]
PLATFORM = REPO / "platform"
SERVICES = sorted((PLATFORM / "systemd").glob("*.service"))
TIMERS = sorted((PLATFORM / "systemd").glob("*.timer"))
CRON = PLATFORM / "cron" / "spate-jobs.cron"


def unit(path: Path) -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment]
    parser.read_string(path.read_text())
    return parser


def service_command(path: Path) -> list[str]:
    """The ``spate ...`` command the service's ExecStart runs, its variables filled in from the unit."""
    text = path.read_text()
    settings = dict(line.split("=", 2)[1:] for line in text.splitlines() if line.startswith("Environment="))
    exec_start = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    inner = shlex.split(exec_start.removeprefix("ExecStart="))[-1].removeprefix("exec ")
    for name, value in settings.items():
        inner = inner.replace(f'"${name}"', shlex.quote(value))
    return shlex.split(inner)


def cron_commands() -> list[list[str]]:
    commands = []
    for line in CRON.read_text().splitlines():
        if not line.strip() or line.startswith("#") or "=" in line.split()[0]:
            continue
        fields = line.split(None, 6)
        assert len(fields) == 7, f"a cron.d line has five time fields, a user and a command: {line!r}"
        command = fields[6].split(">>")[0].replace('"$SPATE_BOOTSTRAP_SERVER"', "127.0.0.1:9092")
        words = shlex.split(command)
        assert words[:3] == ["flock", "-n", words[2]] and words[2].endswith(".lock")
        commands.append(words[3:])
    return commands


def dry_run(command: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    assert command[:3] == ["spate", "jobs", "run"] or command[0].endswith("/spate"), command
    fake = tmp_path / "spark-submit"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "SPARK_SUBMIT": str(fake), "SPATE_STATE_DIR": str(tmp_path / "state")}
    return subprocess.run([sys.executable, "-m", "spate.cli.main", *command[1:], "--dry-run"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("path", SERVICES, ids=lambda p: p.name)
def test_each_service_runs_a_registered_job_once_against_the_brokers(path: Path, tmp_path: Path) -> None:
    service = unit(path)
    assert service.get("Service", "Type") == "oneshot"
    command = service_command(path)
    assert command[1:3] == ["jobs", "run"] and command[3] in JOBS
    assert "--bootstrap-server" in command
    result = dry_run(command, tmp_path)
    assert result.returncode == 0, result.stderr
    assert JOBS[command[3]].script in result.stdout


@pytest.mark.parametrize("path", TIMERS, ids=lambda p: p.name)
def test_each_timer_starts_its_service_and_catches_up_after_downtime(path: Path) -> None:
    timer = unit(path)
    assert (PLATFORM / "systemd" / timer.get("Timer", "Unit")).exists()
    assert timer.get("Timer", "Unit") == path.with_suffix(".service").name
    assert timer.get("Timer", "Persistent") == "true"
    assert timer.get("Install", "WantedBy") == "timers.target"


def test_there_are_recipes_for_compaction_ingest_and_archive() -> None:
    assert {p.stem for p in SERVICES} >= {"spate-compaction", "spate-ingest", "spate-archive"}
    assert {command[3] for command in cron_commands()} >= {"compaction", "ingest", "archive"}


def test_each_cron_line_runs_a_registered_job_that_takes_its_arguments(tmp_path: Path) -> None:
    for command in cron_commands():
        assert command[3] in JOBS and "--bootstrap-server" in command
        result = dry_run(command, tmp_path)
        assert result.returncode == 0, result.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_accepts_the_units() -> None:
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", *map(str, SERVICES + TIMERS)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr
