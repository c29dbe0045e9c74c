"""The broker's log cleaner: background threads that compact due logs.

Each of ``log.cleaner.threads`` threads loops: it asks the thread that owns
the logs (the broker's event loop, through ``run_on_owner``) for the dirtiest
due log and a snapshot of what it needs (rolled segments, bounds, aborted
transactions, producers); plans the cleaning with its own offset map
(``log.cleaner.dedupe.buffer.size`` shared between the threads); rewrites the
segment groups from files only; and hands each cleaned group back to the
owner to swap in (a few renames), then records the new cleaner checkpoint.
So the request path never waits on a cleaning, only on short swaps. With no
due log a thread sleeps ``log.cleaner.backoff.ms``. I/O is throttled to
``log.cleaner.io.max.bytes.per.second`` over all threads, and each thread
yields the interpreter to a busy request thread (``throttler.py``).

A plan made elsewhere (``apply_plan``) goes through the same checks and swaps,
and is refused with ``StalePlanError`` when it no longer fits the log; as
offsets never change, the same plan fits every replica of the partition,
which cleans with it as far as its own log allows (``plan.py``).

Replicas: every replica runs its own cleaner over its own log with the same
rules, as Kafka's do; followers keep copying the leader's batches.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence, TypeVar

from broker_core.storage.cleaner.batch_rewrite import has_delete_horizon
from broker_core.storage.cleaner.cleaner_checkpoint import CleanerCheckpoints
from broker_core.storage.cleaner.cleaner_manager import (
    Candidate,
    CleanableRange,
    choose_dirtiest,
    cleanable_range,
    is_due,
    planned_by_broker,
)
from broker_core.storage.cleaner.offset_map import OffsetMap
from broker_core.storage.cleaner.plan import CleanPlan, LogBounds, SegmentSnapshot, StalePlanError, applied_end
from broker_core.storage.cleaner.planner import plan_cleaning
from broker_core.storage.cleaner.segment_cleaner import (
    CleanerStats,
    CleaningRules,
    clean_group,
    group_segments,
)
from broker_core.storage.cleaner.throttler import InterpreterShare, Throttler
from broker_core.storage.cleaner.transactions import AbortedTransactions, TxnMarkerTracker
from broker_core.storage.config import LogConfig
from broker_core.storage.errors import LogClosedError, LogDirError
from broker_core.storage.files import TopicPartition
from broker_core.storage.segment import SegmentInfo
from broker_core.storage.unified_log import UnifiedLog
from spate.records.batch import HEADER_SIZE, parse_header

_log = logging.getLogger(__name__)

T = TypeVar("T")
RunOnOwner = Callable[[Callable[[], T]], T]


class CleanerStopped(Exception):
    """The cleaner is shutting down; the cleaning in progress is abandoned."""


@dataclass(frozen=True)
class CleanerConfig:
    """The broker's ``log.cleaner.*`` settings."""

    enable: bool = True
    threads: int = 1
    backoff_ms: int = 15_000
    dedupe_buffer_size: int = 134_217_728
    io_max_bytes_per_second: float = 1.7976931348623157e308


@dataclass(frozen=True)
class CleanableLog:
    """A hosted log and its high watermark, as the owner sees them."""

    tp: TopicPartition
    log: UnifiedLog
    high_watermark: int


@dataclass(frozen=True)
class CleanJob:
    """One log's cleaning, as snapshotted on the owner thread."""

    tp: TopicPartition
    log: UnifiedLog
    config: LogConfig
    log_dir: Path
    cleanable: CleanableRange
    segments: tuple[SegmentSnapshot, ...]
    aborted: AbortedTransactions
    producer_last_offsets: Mapping[int, int]
    now_ms: int


@dataclass
class CleanResult:
    tp: TopicPartition
    plan: CleanPlan
    clean_end: int  # the log is clean up to here now: the plan's end, or as far as the log could be cleaned
    stats: CleanerStats = field(default_factory=CleanerStats)


class LogCleaner:
    """The cleaner threads and the state they share (checkpoints, logs in progress)."""

    def __init__(
        self,
        config: CleanerConfig,
        logs: Callable[[], Sequence[CleanableLog]],
        checkpoints: CleanerCheckpoints,
        *,
        run_on_owner: RunOnOwner,
        clock: Callable[[], int],
    ) -> None:
        self.config = config
        self._logs = logs
        self._checkpoints = checkpoints
        self._run_on_owner = run_on_owner
        self._clock = clock
        self._throttler = Throttler(max(config.io_max_bytes_per_second, 1.0))
        self._local = threading.local()  # each thread's InterpreterShare
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._in_progress: set[TopicPartition] = set()  # owner thread only
        self._uncleanable: set[TopicPartition] = set()
        self.stats = CleanerStats()
        self.passes = 0
        per_thread = config.dedupe_buffer_size // max(config.threads, 1)
        self._map_buffer = per_thread

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        for i in range(self.config.threads):
            thread = threading.Thread(target=self._run, name=f"log-cleaner-{i}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def shutdown(self, timeout: float = 30.0) -> None:
        """Stop the threads; a cleaning in progress is abandoned (its files removed on the next load)."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)
        self._threads.clear()

    def _run(self) -> None:
        offset_map = OffsetMap.for_buffer(self._map_buffer)
        while not self._stop.is_set():
            try:
                cleaned = self.clean_once(offset_map)
            except CleanerStopped:
                return
            except Exception:
                _log.exception("log cleaner pass failed")
                cleaned = None
            if cleaned is None:
                self._stop.wait(self.config.backoff_ms / 1000)

    # -------------------------------------------------------------- cleaning

    def clean_once(self, offset_map: OffsetMap | None = None) -> CleanResult | None:
        """Clean the dirtiest due log one pass; None when none is due."""
        job = self._owner(self._next_job)
        if job is None:
            return None
        try:
            offset_map = offset_map if offset_map is not None else OffsetMap.for_buffer(self._map_buffer)
            dirty = [s for s in job.segments if s.end_offset > job.cleanable.first_dirty_offset]
            plan = plan_cleaning(job.tp, dirty, job.cleanable.first_dirty_offset, offset_map, job.aborted,
                                 on_read=self._on_io)
            return self._apply(job, plan)
        except (StalePlanError, LogClosedError, FileNotFoundError) as exc:
            _log.info("cleaning of %s abandoned: %s", job.tp, exc)
            return None
        except (CleanerStopped, LogDirError):
            raise
        except Exception:
            _log.exception("cannot clean %s; it is skipped until the broker restarts", job.tp)
            self._owner(lambda: self._uncleanable.add(job.tp))
            return None
        finally:
            self._owner(lambda: self._in_progress.discard(job.tp))

    def apply_plan(self, plan: CleanPlan) -> CleanResult:
        """Apply a plan made elsewhere; raise ``StalePlanError`` when it no longer fits the log."""
        job = self._owner(lambda: self._job_for(plan.topic_partition))
        try:
            return self._apply(job, plan)
        finally:
            self._owner(lambda: self._in_progress.discard(job.tp))

    def _apply(self, job: CleanJob, plan: CleanPlan) -> CleanResult:
        end = self._owner(lambda: applied_end(
            plan, self._bounds(job.tp, job.log, self._high_watermark(job.tp)),
            job.cleanable.first_uncleanable_offset,
        ))
        result = CleanResult(job.tp, plan, end)
        rules = CleaningRules(
            plan.latest_offsets, job.aborted, job.producer_last_offsets, self._clock(), job.config.delete_retention_ms,
            clean_end=end,
        )
        markers = TxnMarkerTracker()
        in_range = [s for s in job.segments if s.base_offset < end]
        local = job.log.local_log
        for group in group_segments(in_range, job.config.segment_bytes):
            self._check_running()
            cleaned = clean_group(
                local.directory, group, rules, markers, index_interval_bytes=job.config.index_interval_bytes,
                max_index_size=job.config.segment_index_bytes, on_read=self._on_io,
            )
            self._on_io(cleaned.stats.bytes_written)
            self._owner(lambda: local.replace_segments(cleaned))
            result.stats.add(cleaned.stats)
        self._owner(lambda: self._record_checkpoint(job, end))
        self.stats.add(result.stats)
        self.passes += 1
        _log.info(
            "cleaned %s up to %d: %d of %d records kept, %d -> %d bytes", job.tp, end,
            result.stats.records_kept, result.stats.records_read, result.stats.bytes_read, result.stats.bytes_written,
        )
        return result

    def _on_io(self, size: int) -> None:
        self._check_running()
        self._throttler.maybe_throttle(size)
        pacing = getattr(self._local, "pacing", None)
        if pacing is None:
            pacing = self._local.pacing = InterpreterShare()
        pacing.pause()

    def _check_running(self) -> None:
        if self._stop.is_set():
            raise CleanerStopped()

    def _owner(self, fn: Callable[[], T]) -> T:
        return self._run_on_owner(fn)

    # --------------------------------------------- owner thread: choosing, checkpoints

    def _next_job(self) -> CleanJob | None:
        now = self._clock()
        candidates: list[Candidate] = []
        hosted = {}
        for entry in self._logs():
            tp, log = entry.tp, entry.log
            if tp in self._in_progress or tp in self._uncleanable or not planned_by_broker(tp, log.config):
                continue
            if log.local_log.is_closed:
                continue
            hosted[tp] = entry
            cleanable = self._cleanable(tp, log, entry.high_watermark, now)
            first_ts = _first_timestamp(cleanable.dirty[0].path) if cleanable.dirty else -1
            candidates.append(Candidate(tp, cleanable, is_due(cleanable, log.config, now_ms=now,
                                                              first_dirty_timestamp=first_ts)))
        chosen = choose_dirtiest(candidates)
        if chosen is None:
            return None
        return self._job_for(chosen.tp, hosted[chosen.tp])

    def _job_for(self, tp: TopicPartition, entry: CleanableLog | None = None) -> CleanJob:
        if entry is None:
            entry = next((e for e in self._logs() if e.tp == tp), None)
            if entry is None:
                raise StalePlanError(tp, "the partition is not hosted here")
            if tp in self._in_progress:
                raise StalePlanError(tp, "the partition is being cleaned")
        log, now = entry.log, self._clock()
        cleanable = self._cleanable(tp, log, entry.high_watermark, now)
        local = log.local_log
        snapshots = _snapshots(local.segments, cleanable.first_uncleanable_offset)
        end = cleanable.first_uncleanable_offset
        aborted = AbortedTransactions(local.collect_aborted_transactions(local.log_start_offset, end))
        producers = {pid: state.last_offset for pid, state in log.producer_state.active_producers().items()}
        job = CleanJob(tp, log, log.config, local.directory.parent, cleanable, snapshots, aborted, producers, now)
        self._in_progress.add(tp)
        return job

    def dirty_ranges(self) -> dict[TopicPartition, CleanableRange]:
        """Each open compacted log's clean and dirty parts now (owner thread only): what is left to clean."""
        now = self._clock()
        return {
            entry.tp: self._cleanable(entry.tp, entry.log, entry.high_watermark, now)
            for entry in self._logs()
            if entry.log.config.compact_enabled and not entry.log.local_log.is_closed
        }

    @property
    def uncleanable(self) -> frozenset[TopicPartition]:
        """Logs a cleaning failed on; skipped until the broker restarts."""
        return frozenset(self._uncleanable)

    def cleanable_range_of(self, tp: TopicPartition, log: UnifiedLog, high_watermark: int) -> CleanableRange:
        """The log's clean and dirty parts now, as a plan made elsewhere must cover them (owner thread only)."""
        return self._cleanable(tp, log, high_watermark, self._clock())

    def _cleanable(self, tp: TopicPartition, log: UnifiedLog, high_watermark: int, now: int) -> CleanableRange:
        return cleanable_range(
            log.local_log.segments, self._bounds(tp, log, high_watermark), now_ms=now,
            min_compaction_lag_ms=log.config.min_compaction_lag_ms,
        )

    def _bounds(self, tp: TopicPartition, log: UnifiedLog, high_watermark: int) -> LogBounds:
        local = log.local_log
        return LogBounds(
            local.log_start_offset, self._checkpoints.get(local.directory.parent, tp),
            local.active_segment.base_offset, log.first_unstable_offset(), high_watermark,
        )

    def _high_watermark(self, tp: TopicPartition) -> int:
        entry = next((e for e in self._logs() if e.tp == tp), None)
        if entry is None:
            raise StalePlanError(tp, "the partition is not hosted here any more")
        return entry.high_watermark

    def _record_checkpoint(self, job: CleanJob, offset: int) -> None:
        live = [e.tp for e in self._logs() if e.log.local_log.directory.parent == job.log_dir]
        self._checkpoints.update(job.log_dir, job.tp, offset, live=live)


def _snapshots(segments: Sequence[SegmentInfo], up_to: int) -> tuple[SegmentSnapshot, ...]:
    """Rolled segments ending at or below ``up_to``, with their successor's base offset."""
    found = []
    for segment, successor in zip(segments, segments[1:]):
        if successor.base_offset > up_to:
            break
        found.append(SegmentSnapshot(
            segment.base_offset, segment.next_offset, successor.base_offset, segment.size, segment.max_timestamp,
            segment.path,
        ))
    return tuple(found)


def _first_timestamp(path: Path) -> int:
    """The first timestamp of a segment's first batch (-1 when unreadable)."""
    try:
        with open(path, "rb", buffering=0) as f:
            head = f.read(HEADER_SIZE)
        if len(head) < HEADER_SIZE:
            return -1
        header = parse_header(head, 0)
        # A stamped batch's base timestamp is its delete horizon, not a record time.
        return header.max_timestamp if has_delete_horizon(header) else header.base_timestamp
    except OSError:
        return -1
