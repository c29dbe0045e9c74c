"""``spate jobs list`` and ``spate jobs run NAME [ARGS...]``: the platform's Spark jobs, runnable from a scheduler.

``run`` starts the job's script (:mod:`spate.cli.job_registry`) with
``spark-submit`` — on ``local[*]`` unless ``--master`` says otherwise — and
passes it every argument the runner does not take itself (``--master``,
``--state-dir``, ``--spark-conf`` and ``--dry-run`` are the runner's, before
or after the job's name). It waits for the job, records the run
(:mod:`spate.cli.job_runs`) and exits with the job's exit code (0 done,
1 failed, 2 bad arguments; 128+N when the job died of signal N; 127 when
spark-submit is missing), so cron and systemd see what happened. SIGTERM
and SIGINT are passed on to the job; a streaming job they stop counts as
done (exit 0, "stopped on SIGTERM"): it commits each micro-batch atomically
and resumes from its checkpoint. One line on stderr when a run starts and
one when it ends; in between, on a terminal, a progress bar per step the
job reports (:mod:`spate.job_progress`, through a file the runner names in
``$SPATE_JOB_PROGRESS_FILE``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from spate.cli.common import add_output_argument, command_group, print_json, stderr_is_terminal
from spate.cli.errors import CliError
from spate.cli.job_registry import JOBS, JobSpec, jobs_dir, lookup
from spate.cli.job_runs import RunLog, RunRecord, default_state_dir
from spate.cli.progress_follower import ProgressFollower
from spate.job_progress import PROGRESS_FILE_ENV

SPARK_SUBMIT_ENV = "SPARK_SUBMIT"
DEFAULT_MASTER = "local[*]"
COMMAND_NOT_FOUND = 127
_RUNNER_OPTIONS = ("--master", "--state-dir", "--spark-conf")


def register(subparsers: argparse._SubParsersAction) -> None:
    commands = command_group(subparsers, "jobs", "run the platform's Spark jobs (ingest, ...)")
    listing = commands.add_parser("list", help="the jobs and their last runs",
                                  description="List the jobs `spate jobs run` knows, with each one's last run.")
    listing.add_argument("--state-dir", type=Path, help="where runs are recorded (default: $SPATE_STATE_DIR or "
                         "~/.local/state/spate)")
    add_output_argument(listing)
    listing.set_defaults(func=run_list)
    run = commands.add_parser(
        "run", help="run a job with spark-submit",
        description="Run a job with spark-submit and wait for it; every argument after NAME that is not the "
        "runner's own (--master, --state-dir, --spark-conf, --dry-run) goes to the job. "
        "`spate jobs run NAME --help` shows the job's arguments.",
    )
    run.add_argument("name", metavar="NAME", help=f"the job: {', '.join(JOBS)}")
    run.add_argument("job_args", nargs=argparse.REMAINDER, metavar="ARGS", help="the job's arguments")
    run.set_defaults(func=run_job)


# --- list -------------------------------------------------------------------------------------------


def _job_document(name: str, summary: str, run: RunRecord | None) -> dict[str, object]:
    last_run = None if run is None else {"started": run.started, "status": run.status, "duration_s": run.duration_s}
    return {"name": name, "description": summary, "last_run": last_run}


def run_list(args: argparse.Namespace) -> int:
    last = RunLog(args.state_dir or default_state_dir()).last_runs()
    if args.output == "json":
        print_json({"jobs": [_job_document(spec.name, spec.summary, last.get(spec.name)) for spec in JOBS.values()]})
        return 0
    rows = [("JOB", "LAST RUN (UTC)", "STATUS", "DURATION", "DESCRIPTION")]
    for spec in JOBS.values():
        run = last.get(spec.name)
        if run is None:
            rows.append((spec.name, "-", "never run", "-", spec.summary))
            continue
        started = dt.datetime.fromtimestamp(run.started, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        duration = "-" if run.duration_s is None else f"{run.duration_s:.1f}s"
        rows.append((spec.name, started, run.status, duration, spec.summary))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1])
    return 0


# --- run --------------------------------------------------------------------------------------------


@dataclass
class RunnerOptions:
    master: str = DEFAULT_MASTER
    state_dir: Path | None = None
    spark_conf: list[str] = field(default_factory=list)
    dry_run: bool = False


def split_runner_options(arguments: list[str]) -> tuple[RunnerOptions, list[str]]:
    """The runner's options (``--opt VALUE`` or ``--opt=VALUE``) apart from the job's arguments."""
    runner, job_args = RunnerOptions(), []
    items = iter(arguments)
    for item in items:
        name, equals, inline = item.partition("=")
        if item == "--dry-run":
            runner.dry_run = True
            continue
        if name not in _RUNNER_OPTIONS:
            job_args.append(item)
            continue
        value = inline if equals else next(items, None)
        if value is None:
            raise CliError(f"{name} needs a value", exit_code=2)
        if name == "--master":
            runner.master = value
        elif name == "--state-dir":
            runner.state_dir = Path(value)
        elif "=" not in value:
            raise CliError(f"--spark-conf takes KEY=VALUE, not {value!r}", exit_code=2)
        else:
            runner.spark_conf.append(value)
    return runner, job_args


def spark_submit() -> str:
    """``$SPARK_SUBMIT``, the spark-submit beside this Python, on PATH, or under ``$SPARK_HOME``."""
    candidates = [os.environ.get(SPARK_SUBMIT_ENV), str(Path(sys.executable).parent / "spark-submit"),
                  shutil.which("spark-submit")]
    if os.environ.get("SPARK_HOME"):
        candidates.append(str(Path(os.environ["SPARK_HOME"]) / "bin" / "spark-submit"))
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise CliError("spark-submit not found: install pyspark in this environment, put spark-submit on PATH, "
                   f"or set ${SPARK_SUBMIT_ENV}", exit_code=COMMAND_NOT_FOUND)


def submit_command(spec: JobSpec, runner: RunnerOptions, job_args: list[str]) -> list[str]:
    command = [spark_submit(), "--master", runner.master, "--name", f"spate-{spec.name}"]
    for setting in runner.spark_conf:
        command += ["--conf", setting]
    log4j = jobs_dir().parent / "conf" / "log4j2.properties"
    if log4j.exists():
        command += ["--driver-java-options", f"-Dlog4j2.configurationFile={log4j}"]
    return command + [str(spec.script_path()), *job_args]


def run_job(args: argparse.Namespace) -> int:
    spec = lookup(args.name)
    if spec is None:
        raise CliError(f"unknown job {args.name!r}; the jobs are: {', '.join(JOBS)}", exit_code=2)
    runner, job_args = split_runner_options(list(args.job_args))
    if not spec.script_path().exists():
        raise CliError(f"job {spec.name}: its script {spec.script_path()} is missing (set $SPATE_JOBS_DIR to "
                       "the directory holding the jobs)")
    command = submit_command(spec, runner, job_args)
    if runner.dry_run:
        print(shlex.join(command))
        return 0
    state_dir = runner.state_dir or default_state_dir()
    log = RunLog(state_dir)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    record = RunRecord(f"{spec.name}-{stamp}-{uuid.uuid4().hex[:6]}", spec.name, time.time(), command, os.getpid())
    log.started(record)
    _say(f"{record.run_id} started: {shlex.join(command)}")
    progress_file = state_dir / "jobs" / f"{record.run_id}.progress"
    follower = ProgressFollower(progress_file, Console(file=sys.stderr)).start() if stderr_is_terminal() else None
    try:
        code, stop_signal = _wait_for(command, progress_file)
    finally:
        record.finished = time.time()
        if follower is not None:
            follower.stop()
        progress_file.unlink(missing_ok=True)
    if stop_signal is not None and spec.streaming and code != 0:
        # A streaming job commits each micro-batch atomically: stopped anywhere, it resumes from its checkpoint.
        verdict = f"stopped on {signal.Signals(stop_signal).name}"
        code = 0
    else:
        verdict = "succeeded" if code == 0 else f"failed with exit code {code}"
    record.exit_code = code
    log.finished(record)
    _say(f"{record.run_id} {verdict} after {record.duration_s:.1f}s")
    return code


def _wait_for(command: list[str], progress_file: Path) -> tuple[int, int | None]:
    """Run the job to its end; (its exit code, the signal that asked it to stop or None)."""
    env = {**os.environ, PROGRESS_FILE_ENV: str(progress_file)}
    root = str(jobs_dir().parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    child = subprocess.Popen(command, env=env)
    previous, stop = {}, []

    def forward(signum, _frame) -> None:
        stop.append(signum)
        if child.poll() is None:
            child.send_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGINT):
        previous[signum] = signal.signal(signum, forward)
    try:
        code = child.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return (128 - code if code < 0 else code), (stop[0] if stop else None)


def _say(line: str) -> None:
    print(f"spate jobs: {line}", file=sys.stderr, flush=True)
