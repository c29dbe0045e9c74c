"""Every partition log of a broker, across its ``log.dirs``.

On start the manager opens every log found in its ``log.dirs`` (see
``log_dir_loader``, which also honours and removes the clean-shutdown marker).

Per log dir, ``recovery-point-offset-checkpoint`` and
``log-start-offset-checkpoint`` record every log's flushed offset and log
start offset; they are rewritten by ``checkpoint()`` (to be scheduled by the
broker) and once per dir on ``shutdown()``.

``shutdown()`` closes the logs of each dir on the same number of threads
(``num.recovery.threads.per.data.dir``, as Kafka does):
each job snapshots one log's producer state, fsyncs what it holds above its
recovery point (nothing, when it took no data since its last flush) and
closes it. A dir whose every job completed gets its checkpoints and then its
clean-shutdown marker; a dir where one failed gets no marker, so its logs are
recovered on the next start.

A log dir that fails I/O goes offline (``failures``, see
``log_dir_failures``): its logs are closed and dropped by
:meth:`LogManager.take_offline`, and no log, checkpoint or marker is
written there again until the broker restarts. A log dir unusable at start
is offline from the start, unless every log dir is.

Concurrency: like ``LocalLog``, the manager is used from one thread; only
loading and ``shutdown()`` run jobs on other threads, one log per job (see
``log_dir_jobs``), and the manager waits for them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping

from broker_core.storage.archive_checkpoint import ArchiveCheckpoints
from broker_core.storage.checkpoint import OffsetCheckpointFile
from broker_core.storage.config import LogConfig
from broker_core.storage.errors import LogDirError
from broker_core.storage.files import (
    CLEAN_SHUTDOWN_FILE,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    TopicPartition,
    deletion_dir_name,
    partition_dir_name,
)
from broker_core.storage.fs import write_atomically
from broker_core.storage.local_log import Clock, LocalLog
from broker_core.storage.log_dir_failures import LogDirFailureChannel
from broker_core.storage.log_dir_jobs import Job, run_per_log_dir
from broker_core.storage.log_dir_loader import check_log_dir, load_logs
from broker_core.storage.log_flusher import PendingFlush
from broker_core.storage.open_files import OpenFileCache

_log = logging.getLogger(__name__)


@dataclass
class _PendingLogDelete:
    log: LocalLog
    due_ms: int


class LogManager:
    """Opens, creates, deletes, flushes, checkpoints and ages all partition logs."""

    def __init__(
        self,
        log_dirs: list[Path],
        default_config: LogConfig,
        *,
        clock: Clock,
        topic_config: Callable[[str], LogConfig | None] | None = None,
        unique_id: Callable[[], str] | None = None,
        failures: LogDirFailureChannel | None = None,
        max_open_files: int | None = None,
        recovery_threads_per_dir: int = 1,
    ) -> None:
        """Load every log found under ``log_dirs``.

        ``topic_config`` gives a topic's own config (None: the default);
        ``unique_id`` names directories of deleted partitions;
        ``max_open_files`` bounds the descriptors of all segment files
        together (``log.max.open.files``; None: no bound);
        ``recovery_threads_per_dir`` is how many logs of one dir load, and close, at once.
        Raises ``LogDirError`` when no log dir is a usable directory or a
        partition is present in two log dirs, ``CorruptCheckpointError`` for
        an unparsable checkpoint file.
        """
        if not log_dirs:
            raise ValueError("at least one log dir is needed")
        resolved = [Path(d) for d in log_dirs]
        if len({d.resolve() for d in resolved}) != len(resolved):
            raise LogDirError(resolved[0], "the same log dir is listed twice")
        if recovery_threads_per_dir < 1:
            raise ValueError(f"recovery threads per log dir must be at least 1, not {recovery_threads_per_dir}")
        self._dirs = resolved
        self._recovery_threads = recovery_threads_per_dir
        self._default_config = default_config
        self._clock = clock
        self._topic_config = topic_config or (lambda topic: None)
        self._unique_id = unique_id or (lambda: uuid.uuid4().hex)
        self._logs: dict[TopicPartition, LocalLog] = {}
        # Logs per log dir, so that placing a new log does not scan every log.
        self._dir_counts: dict[Path, int] = {d: 0 for d in resolved}
        self.open_files = OpenFileCache(max_open_files)
        # Dirs whose checkpoints still name deleted logs: rewritten before a log is created there.
        self._stale_checkpoints: set[Path] = set()
        self._deleting: list[_PendingLogDelete] = []
        self._shut_down = False
        self.failures = failures or LogDirFailureChannel(resolved)
        unusable = []
        for log_dir in self._dirs:
            try:
                check_log_dir(log_dir)
            except LogDirError as exc:
                unusable.append(exc)
        if len(unusable) == len(self._dirs):
            raise unusable[0]
        for exc in unusable:
            self.failures.report(exc.path, exc)
        loaded = load_logs(
            self._live_dirs(), config_for=self._config_for, clock=clock, open_files=self.open_files,
            recovery_threads_per_dir=recovery_threads_per_dir,
        )
        for tp, log in loaded.items():
            self._add(tp, self._watched(log))
        # How far each archiving topic's partitions are in their Delta archive (bounds retention).
        self.archive_offsets = ArchiveCheckpoints(self._live_dirs())

    # ------------------------------------------------------------ registry

    def _add(self, tp: TopicPartition, log: LocalLog) -> None:
        self._logs[tp] = log
        parent = log.directory.parent
        self._dir_counts[parent] = self._dir_counts.get(parent, 0) + 1

    def _discard(self, tp: TopicPartition) -> LocalLog | None:
        log = self._logs.pop(tp, None)
        if log is not None:
            parent = log.directory.parent
            self._dir_counts[parent] = self._dir_counts.get(parent, 1) - 1
        return log

    def _watched(self, log: LocalLog) -> LocalLog:
        log.failures = self.failures
        return log

    def _live_dirs(self) -> list[Path]:
        return self.failures.live_dirs

    def _config_for(self, topic: str) -> LogConfig:
        config = self._topic_config(topic)
        return config if config is not None else self._default_config

    # ------------------------------------------------------------------ logs

    @property
    def log_dirs(self) -> list[Path]:
        return list(self._dirs)

    def get_log(self, topic: str, partition: int) -> LocalLog | None:
        return self._logs.get(TopicPartition(topic, partition))

    def all_logs(self) -> dict[TopicPartition, LocalLog]:
        return dict(self._logs)

    def get_or_create_log(
        self, topic: str, partition: int, config: LogConfig | None = None, *, is_new: bool = True
    ) -> LocalLog:
        """The partition's log, created in the least loaded live log dir when absent.

        A ``config`` given for an existing log replaces its config. A log
        that should exist already (not ``is_new``) is not created while a log
        dir is offline: the offline dir may hold it, and an empty new log
        would pass for it (``LogDirError``, KAFKA_STORAGE_ERROR).
        """
        self._check_running()
        tp = TopicPartition(topic, partition)
        existing = self._logs.get(tp)
        if existing is not None:
            if config is not None and config != existing.config:
                existing.update_config(config)
            return existing
        offline, live = self.failures.offline_dirs, self._live_dirs()
        if offline and not is_new:
            raise LogDirError(offline[0], f"the log of {tp} is not in a live log dir; offline: "
                                          f"{', '.join(map(str, offline))}")
        if not live:
            raise LogDirError(self._dirs[0], f"cannot create the log of {tp}: every log dir is offline")
        name = partition_dir_name(tp)
        log_dir = min(live, key=lambda d: self._dir_counts.get(d, 0))
        if log_dir in self._stale_checkpoints:
            # A recovery point of a deleted log must not apply to a new one of the same name.
            self._write_checkpoints(log_dir)
        directory = log_dir / name
        fresh = not directory.exists()
        try:
            log = self._watched(LocalLog.open(
                directory, config or self._config_for(topic), clock=self._clock, open_files=self.open_files
            ))
        except LogDirError as exc:
            if fresh:  # what this attempt made of the new log goes, so a retry starts clean
                shutil.rmtree(directory, ignore_errors=True)
            self.failures.report(log_dir, exc)
            raise
        self._add(tp, log)
        return log

    def take_offline(self, log_dir: Path) -> list[TopicPartition]:
        """Drop and close (as far as the failed dir allows) every log in the offline ``log_dir``."""
        gone = sorted(tp for tp, log in self._logs.items() if log.directory.parent == log_dir)
        for tp in gone:
            log = self._discard(tp)
            if log is None:
                continue
            try:
                log.close()
            except Exception as exc:  # the dir failed: what is left of the log stays as it is
                _log.warning("closing %s in the failed log dir %s: %s", tp, log_dir, exc)
        self._deleting = [p for p in self._deleting if p.log.directory.parent != log_dir]
        return gone

    def update_topic_config(self, topic: str, config: LogConfig) -> None:
        for tp, log in self._logs.items():
            if tp.topic == topic:
                log.update_config(config)

    def delete_log(self, topic: str, partition: int) -> bool:
        """Take the partition offline now and remove its files after ``file.delete.delay.ms``."""
        self._check_running()
        tp = TopicPartition(topic, partition)
        log = self._discard(tp)
        if log is None:
            return False
        target = log.directory.parent / deletion_dir_name(tp, self._unique_id())
        log.detach_to(target)
        self._deleting.append(_PendingLogDelete(log, self._clock() + log.config.file_delete_delay_ms))
        self.archive_offsets.forget(target.parent, tp)
        # Rewritten once before the next creation in that dir (or by the periodic checkpoint), not per
        # deletion: deleting a topic of n partitions would rewrite files of n entries n times.
        self._stale_checkpoints.add(target.parent)
        return True

    # ------------------------------------------------------------ background

    def run_retention(
        self, now_ms: int | None = None, *, high_watermark: Callable[[TopicPartition], int | None] | None = None
    ) -> int:
        """Apply every log's retention; return segments deleted.

        ``high_watermark`` bounds what may go per partition (None: no bound).
        """
        now = self._clock() if now_ms is None else now_ms
        deleted = 0
        for tp, log in list(self._logs.items()):
            bound = high_watermark(tp) if high_watermark is not None else None
            archived = self.archive_offsets.get(log.directory.parent, tp)
            with _reported_already():
                deleted += log.delete_old_segments(now, high_watermark=bound, archived_offset=archived)
        return deleted

    def archived_offset(self, tp: TopicPartition) -> int | None:
        """The partition's archived offset here, or None (not hosted, or never reported)."""
        log = self._logs.get(tp)
        return None if log is None else self.archive_offsets.get(log.directory.parent, tp)

    def record_archived_offset(self, tp: TopicPartition, offset: int) -> int:
        """Checkpoint that ``tp`` is archived below ``offset``; return the recorded offset (it never shrinks)."""
        self._check_running()
        log = self._logs.get(tp)
        if log is None:
            raise KeyError(f"no log for {tp} on this broker")
        log_dir = log.directory.parent
        live = [p for p, other in self._logs.items() if other.directory.parent == log_dir]
        return self.archive_offsets.update(log_dir, tp, offset, live=live)

    def flush_dirty(self, now_ms: int | None = None) -> int:
        """fsync rolled segments and logs whose ``flush.ms`` has passed; return logs flushed."""
        now = self._clock() if now_ms is None else now_ms
        flushed = 0
        for log in [log for log in self._logs.values() if log.needs_scheduled_flush(now)]:
            with _reported_already():
                rolled = log.flush_rolled_segments()
                if log.flush_if_due(now) or rolled:
                    flushed += 1
        return flushed

    def begin_scheduled_flushes(self, now_ms: int | None = None) -> list[tuple[LocalLog, PendingFlush]]:
        """What ``flush_dirty`` would fsync, prepared so the fsyncs can run off the event loop: run each
        ``PendingFlush`` (any thread), then hand the list to ``complete_flushes``."""
        now = self._clock() if now_ms is None else now_ms
        pending = []
        for log in [log for log in self._logs.values() if log.needs_scheduled_flush(now)]:
            with _reported_already():
                flush = log.begin_scheduled_flush(now)
                if flush is not None:
                    pending.append((log, flush))
        return pending

    def complete_flushes(self, pending: list[tuple[LocalLog, PendingFlush]]) -> int:
        """Move the recovery points of flushes whose fsyncs ran; return the logs flushed."""
        flushed = 0
        for log, flush in pending:
            with _reported_already():
                log.complete_flush(flush)
                flushed += 1
        return flushed

    def run_pending_deletes(self, now_ms: int | None = None) -> int:
        """Delete the files of removed segments and partitions that are due; return how many."""
        now = self._clock() if now_ms is None else now_ms
        deleted = 0
        for log in [log for log in self._logs.values() if log.pending_deletes]:
            with _reported_already():
                deleted += log.run_pending_deletes(now)
        due = [pending for pending in self._deleting if pending.due_ms <= now]
        for pending in due:
            pending.log.delete()
            self._deleting.remove(pending)
            deleted += 1
        return deleted

    def checkpoint(self, *, recovery_points: bool = True, log_start_offsets: bool = True) -> None:
        """Rewrite the recovery-point and the log-start-offset checkpoint files of every log dir (or one of them:
        each has its own interval, ``log.flush.offset.checkpoint.interval.ms`` and
        ``log.flush.start.offset.checkpoint.interval.ms``)."""
        for log_dir in self._live_dirs():
            self._write_checkpoints(log_dir, recovery_points, log_start_offsets)

    def _write_checkpoints(self, log_dir: Path, recovery_points: bool = True, log_start_offsets: bool = True) -> None:
        if self.failures.is_offline(log_dir):
            return
        if recovery_points and log_start_offsets:
            self._stale_checkpoints.discard(log_dir)
        # Compared as text: a Path's parent and equality cost microseconds, which count at thousands of logs.
        parent = str(log_dir)
        logs = {tp: log for tp, log in self._logs.items() if os.path.dirname(log.directory) == parent}
        try:
            if recovery_points:
                OffsetCheckpointFile(log_dir / RECOVERY_POINT_CHECKPOINT).write(
                    {tp: log.recovery_point for tp, log in logs.items()}
                )
            if log_start_offsets:
                OffsetCheckpointFile(log_dir / LOG_START_OFFSET_CHECKPOINT).write(
                    {tp: log.log_start_offset for tp, log in logs.items()}
                )
        except LogDirError as exc:
            self.failures.report(log_dir, exc)

    # -------------------------------------------------------------- shutdown

    def shutdown(self, checkpoints: Mapping[TopicPartition, Callable[[], None]] | None = None) -> None:
        """Close every log (in parallel per log dir), then write each dir's checkpoints and clean-shutdown marker.

        ``checkpoints`` gives, per partition, what to run first in its log's job (the
        producer-state snapshot and flush of its ``UnifiedLog``).
        """
        if self._shut_down:
            return
        self._shut_down = True
        for pending in self._deleting:
            pending.log.delete()
        self._deleting.clear()
        checkpoints = checkpoints or {}
        jobs: dict[Path, list[Job]] = {log_dir: [] for log_dir in self._live_dirs()}
        for tp, log in self._logs.items():
            jobs.setdefault(log.directory.parent, []).append(_close_job(tp, log, checkpoints.get(tp)))
        # Jobs of several threads share the open-file cache: it must not close one thread's file for another.
        self.open_files.stop_evicting()
        errors = run_per_log_dir(jobs, self._recovery_threads)
        for log_dir in self._live_dirs():
            self._write_checkpoints(log_dir)
            if errors.get(log_dir):
                _log.error("%d logs of %s did not close cleanly (first: %r); they are recovered on the next start",
                           len(errors[log_dir]), log_dir, errors[log_dir][0])
                continue
            # A dir that failed meanwhile (its checkpoints too, perhaps) gets no marker: a clean start takes
            # each log's end from the recovery-point checkpoint, so the marker vouches for it.
            if self.failures.is_offline(log_dir):
                continue
            try:
                write_atomically(log_dir / CLEAN_SHUTDOWN_FILE, b"")
            except OSError as exc:
                self.failures.report(log_dir, exc)

    def _check_running(self) -> None:
        if self._shut_down:
            raise RuntimeError("the log manager has shut down")


def _close_job(tp: TopicPartition, log: LocalLog, checkpoint: Callable[[], None] | None) -> Job:
    def close() -> None:
        try:
            with _reported_already():
                if checkpoint is not None:
                    checkpoint()
                log.flush()
        except Exception:
            _log.exception("flushing the log of %s failed during shutdown", tp)
            raise
        finally:
            log.close()
    return close


@contextlib.contextmanager
def _reported_already() -> Iterator[None]:
    """Go on with the next log: this one's I/O error took its log dir offline (``reports_io_errors``)."""
    try:
        yield
    except LogDirError as exc:
        _log.warning("skipping a log of an offline log dir: %s", exc)
