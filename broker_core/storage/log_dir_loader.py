"""Start-up: every partition log found in the live log dirs, opened.

Each log dir is checked (created when missing), its checkpoints read, the
partition directories whose deletion was scheduled before a restart removed,
and every ``<topic>-<partition>`` directory opened as a ``LocalLog``, on
``recovery_threads_per_dir`` threads per dir as Kafka does (file I/O releases
the GIL; each job gives back the descriptors its log opened, so that
recovering thousands of logs stays within the open-file cap).

A ``.kafka_cleanshutdown`` marker in a log dir means the previous shutdown
flushed and closed everything there and then checkpointed each log's end as
its recovery point, so its logs open lazily, reading no segment (see
``loader``); the marker is removed once loading is done, so that a crash from
then on is seen as unclean.
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from broker_core.storage.checkpoint import OffsetCheckpointFile
from broker_core.storage.config import LogConfig
from broker_core.storage.errors import LogDirError
from broker_core.storage.files import (
    CLEAN_SHUTDOWN_FILE,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    TopicPartition,
    is_deletion_dir_name,
    is_future_dir_name,
    parse_partition_dir_name,
)
from broker_core.storage.local_log import Clock, LocalLog
from broker_core.storage.log_dir_jobs import Job, run_per_log_dir
from broker_core.storage.open_files import OpenFileCache

_log = logging.getLogger(__name__)


def check_log_dir(log_dir: Path) -> None:
    """Create ``log_dir`` when missing; ``LogDirError`` when it is not a writable directory."""
    if log_dir.exists() and not log_dir.is_dir():
        raise LogDirError(log_dir, "is not a directory")
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LogDirError(log_dir, f"cannot be created: {exc.strerror or exc}") from exc
    if not os.access(log_dir, os.W_OK | os.X_OK):
        raise LogDirError(log_dir, "is not writable")


@dataclass(frozen=True)
class _LogDirState:
    """What a log dir's last shutdown left: whether it was clean, and its checkpoints."""

    clean_shutdown: bool
    recovery_points: dict[TopicPartition, int]
    log_starts: dict[TopicPartition, int]

    @classmethod
    def read(cls, log_dir: Path) -> _LogDirState:
        return cls(
            (log_dir / CLEAN_SHUTDOWN_FILE).exists(),
            OffsetCheckpointFile(log_dir / RECOVERY_POINT_CHECKPOINT).read(),
            OffsetCheckpointFile(log_dir / LOG_START_OFFSET_CHECKPOINT).read(),
        )


def load_logs(
    log_dirs: list[Path],
    *,
    config_for: Callable[[str], LogConfig],
    clock: Clock,
    open_files: OpenFileCache,
    recovery_threads_per_dir: int,
) -> dict[TopicPartition, LocalLog]:
    """Open every log of ``log_dirs`` (module docstring), then remove their clean-shutdown markers.

    Raises the first error of a log that failed to open, ``LogDirError`` when
    a partition is in two log dirs, ``CorruptCheckpointError`` for an
    unparsable checkpoint file.
    """
    states = {log_dir: _LogDirState.read(log_dir) for log_dir in log_dirs}
    found = {log_dir: _partition_dirs(log_dir) for log_dir in log_dirs}
    opened: dict[Path, LocalLog] = {}
    # Once per topic, not per partition: a topic's config is merged from the broker's and its overrides.
    configs = {tp.topic: None for dirs in found.values() for _, tp in dirs}
    configs = {topic: config_for(topic) for topic in configs}
    jobs = {
        log_dir: [
            _load_job(path, tp, states[log_dir], configs[tp.topic], clock, open_files, opened) for path, tp in dirs
        ]
        for log_dir, dirs in found.items()
    }
    # Jobs of several threads share the open-file cache: each gives back what its log opened (recovery).
    open_files.stop_evicting()
    try:
        errors = run_per_log_dir(jobs, recovery_threads_per_dir)
    finally:
        open_files.resume_evicting()
    for dir_errors in errors.values():
        if dir_errors:
            raise dir_errors[0]
    logs: dict[TopicPartition, LocalLog] = {}
    for dirs in found.values():
        for path, tp in dirs:
            if tp in logs:
                raise LogDirError(path, f"partition {tp} is also in {logs[tp].directory.parent}")
            logs[tp] = opened[path]
    for log_dir in log_dirs:
        (log_dir / CLEAN_SHUTDOWN_FILE).unlink(missing_ok=True)
    return logs


def _partition_dirs(log_dir: Path) -> list[tuple[Path, TopicPartition]]:
    """The ``<topic>-<partition>`` directories of ``log_dir``; leftovers of deleted partitions are removed."""
    found = []
    for entry in sorted(os.scandir(log_dir), key=lambda e: e.name):
        if not entry.is_dir(follow_symlinks=False):
            continue
        if is_deletion_dir_name(entry.name):
            _log.info("removing %s, a partition deleted before the restart", entry.path)
            shutil.rmtree(entry.path, ignore_errors=True)
            continue
        if is_future_dir_name(entry.name):
            _log.warning("ignoring %s: moving logs between dirs is not supported", entry.path)
            continue
        tp = parse_partition_dir_name(entry.name)
        if tp is None:
            _log.warning("ignoring %s: not a <topic>-<partition> directory", entry.path)
            continue
        found.append((Path(entry.path), tp))
    return found


def _load_job(
    path: Path, tp: TopicPartition, state: _LogDirState, config: LogConfig, clock: Clock,
    open_files: OpenFileCache, opened: dict[Path, LocalLog],
) -> Job:
    recovery_point = state.recovery_points.get(tp)
    log_start = state.log_starts.get(tp)

    def load() -> None:
        log = LocalLog.open(
            path, config, clock=clock, recovery_point=recovery_point,
            log_start_offset=log_start, had_clean_shutdown=state.clean_shutdown, open_files=open_files,
        )
        # What recovery opened goes back to the cache now: thousands of logs recovered at once
        # would otherwise hold their descriptors until the cache may evict again.
        log.release_files()
        opened[path] = log
    return load
