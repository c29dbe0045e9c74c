"""``spate jobs``: the generic runner a scheduler calls, its exit codes and its record of runs.

A stand-in spark-submit (``$SPARK_SUBMIT``) records its arguments and exits
with a chosen code, so the runner is tested without starting Spark.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spate.cli.errors import CliError
from spate.cli.job_runs import RunLog, RunRecord
from spate.cli.jobs import split_runner_options

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_spark_submit(tmp_path):
    script = tmp_path / "spark-submit"
    script.write_text("#!/bin/sh\n"
                      'printf "%s\\n" "$@" > "$FAKE_ARGS"\n'
                      'echo "PYTHONPATH=$PYTHONPATH" >> "$FAKE_ARGS"\n'
                      'exit "${FAKE_EXIT:-0}"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def spate(*args, tmp_path, spark_submit=None, exit_code=0):
    env = {**os.environ, "SPATE_STATE_DIR": str(tmp_path / "state"), "FAKE_ARGS": str(tmp_path / "args"),
           "FAKE_EXIT": str(exit_code)}
    if spark_submit is not None:
        env["SPARK_SUBMIT"] = str(spark_submit)
    return subprocess.run([sys.executable, "-m", "spate.cli.main", "jobs", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)


def test_run_submits_the_job_script_with_the_job_arguments(fake_spark_submit, tmp_path):
    result = spate("run", "ingest", "--topic", "t", "--master", "spark://h:7077", "--table", "/x",
                   "--spark-conf", "spark.executor.memory=2g", tmp_path=tmp_path, spark_submit=fake_spark_submit)
    assert result.returncode == 0, result.stderr
    args = (tmp_path / "args").read_text().splitlines()
    assert args[:4] == ["--master", "spark://h:7077", "--name", "spate-ingest"]
    assert args[args.index("--conf") + 1] == "spark.executor.memory=2g"
    script = args.index(str(REPO / "jobs" / "ingest.py"))
    assert args[script + 1:script + 5] == ["--topic", "t", "--table", "/x"]
    assert args[-1].startswith(f"PYTHONPATH={REPO}")
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("spate jobs: ingest-") and " started: " in lines[0]
    assert lines[-1].endswith("s") and " succeeded after " in lines[-1]


def test_the_job_exit_code_is_the_runner_exit_code_and_is_recorded(fake_spark_submit, tmp_path):
    result = spate("run", "ingest", "--topic", "t", tmp_path=tmp_path, spark_submit=fake_spark_submit, exit_code=3)
    assert result.returncode == 3
    assert "failed with exit code 3" in result.stderr
    [run] = RunLog(tmp_path / "state").runs()
    assert (run.job, run.exit_code, run.status) == ("ingest", 3, "failed (exit 3)")
    listing = spate("list", tmp_path=tmp_path)
    assert listing.returncode == 0
    rows = {line.split()[0]: line for line in listing.stdout.splitlines()[1:]}
    assert "failed (exit 3)" in rows["ingest"]
    assert "never run" in rows["copy-topic"]


def test_the_default_master_is_local_and_dry_run_only_prints(fake_spark_submit, tmp_path):
    result = spate("run", "ingest", "--dry-run", tmp_path=tmp_path, spark_submit=fake_spark_submit)
    assert result.returncode == 0
    assert "--master 'local[*]'" in result.stdout
    assert not (tmp_path / "args").exists()
    assert RunLog(tmp_path / "state").runs() == []


def test_an_unknown_job_is_a_usage_error(tmp_path):
    result = spate("run", "compactt", tmp_path=tmp_path)
    assert result.returncode == 2
    assert "unknown job 'compactt'; the jobs are: ingest" in result.stderr


def test_a_missing_spark_submit_exits_127(tmp_path, monkeypatch):
    from spate.cli import jobs

    monkeypatch.setenv("SPARK_SUBMIT", str(tmp_path / "nowhere"))
    monkeypatch.setattr(jobs.sys, "executable", str(tmp_path / "python"))
    monkeypatch.setattr(jobs.shutil, "which", lambda name: None)
    monkeypatch.delenv("SPARK_HOME", raising=False)
    with pytest.raises(CliError, match="spark-submit not found") as raised:
        jobs.spark_submit()
    assert raised.value.exit_code == 127


def test_runner_options_are_taken_wherever_they_are():
    runner, job_args = split_runner_options(
        ["--topic", "t", "--master=local[2]", "--state-dir", "/s", "--spark-conf", "a=b", "--available-now"])
    assert (runner.master, str(runner.state_dir), runner.spark_conf) == ("local[2]", "/s", ["a=b"])
    assert job_args == ["--topic", "t", "--available-now"]
    with pytest.raises(CliError, match="--master needs a value"):
        split_runner_options(["--master"])
    with pytest.raises(CliError, match="KEY=VALUE"):
        split_runner_options(["--spark-conf", "nonsense"])


def test_a_torn_last_line_of_the_run_record_is_skipped(tmp_path):
    log = RunLog(tmp_path)
    log.started(RunRecord("r1", "ingest", 1.0, ["x"], pid=os.getpid()))
    with open(log.path, "a") as out:
        out.write('{"event": "finished", "run_id": "r1", "exit')
    [run] = log.runs()
    assert run.status == "running"
    assert json.loads(log.path.read_text().splitlines()[0])["job"] == "ingest"


def _stoppable_spark_submit(tmp_path):
    script = tmp_path / "spark-submit-sleeps"
    script.write_text("#!/bin/sh\n"
                      'trap \'echo stopping >> "$FAKE_ARGS"; kill $!; exit 143\' TERM\n'
                      "sleep 60 >/dev/null 2>&1 &\n"
                      'echo started > "$FAKE_ARGS"\n'
                      "wait\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def _start_and_terminate(job, tmp_path):
    env = {**os.environ, "SPATE_STATE_DIR": str(tmp_path / "state"), "FAKE_ARGS": str(tmp_path / "args"),
           "SPARK_SUBMIT": str(_stoppable_spark_submit(tmp_path))}
    runner = subprocess.Popen([sys.executable, "-m", "spate.cli.main", "jobs", "run", job], cwd=REPO, env=env,
                              stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not (tmp_path / "args").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    runner.send_signal(signal.SIGTERM)
    _, stderr = runner.communicate(timeout=30)
    return runner.returncode, stderr


def test_sigterm_reaches_the_job_and_a_stopped_streaming_job_counts_as_done(tmp_path):
    code, stderr = _start_and_terminate("ingest", tmp_path)
    assert "stopping" in (tmp_path / "args").read_text()
    assert code == 0
    assert "stopped on SIGTERM" in stderr
    [run] = RunLog(tmp_path / "state").runs()
    assert run.status == "succeeded"


def test_the_job_is_told_where_to_report_progress_and_the_file_goes_with_the_run(tmp_path):
    script = tmp_path / "spark-submit-reports"
    script.write_text("#!/bin/sh\n"
                      'echo "$SPATE_JOB_PROGRESS_FILE" > "$FAKE_ARGS"\n'
                      'echo \'{"step": "partitions compacted", "done": 1, "total": 2}\' >> "$SPATE_JOB_PROGRESS_FILE"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    result = spate("run", "compaction", "--topic", "t", tmp_path=tmp_path, spark_submit=script)
    assert result.returncode == 0, result.stderr
    [run] = RunLog(tmp_path / "state").runs()
    progress_file = Path((tmp_path / "args").read_text().strip())
    assert progress_file == tmp_path / "state" / "jobs" / f"{run.run_id}.progress"
    assert not progress_file.exists()
