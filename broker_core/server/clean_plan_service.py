"""Applying compaction plans that arrive over the wire (the CleanPlan request), and describing logs for them.

A replica of a partition takes the plan's chunks on the event loop
(``plan_assembly.py``); the last one hands the whole plan to the log
cleaner's ``apply_plan`` on a worker thread, which checks it against the log
(leader epoch aside, which the handler checks: log start, the cleaner
checkpoint, the high watermark and open transactions), cuts it where the
log may be cleaned now (the active segment, ``min.compaction.lag.ms``) and
rewrites the segments off the loop. A plan that no longer fits is refused
with the reason (``StalePlanError``) and the job plans again. One plan per
partition is applied at a time.

Every replica takes plans, not only the leader: offsets never change, so a
plan made from the leader's records fits each replica's log up to that
replica's own high watermark, and each replica cleans its own log with it as
far as its own segments allow (``storage/cleaner/plan.py``). The job sends
the same plan to every replica of the partition, as in Kafka every replica
cleans its own log.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from broker_core.server.plan_assembly import PlanAssembly
from broker_core.storage.cleaner.cleaner_manager import is_due
from broker_core.storage.cleaner.log_cleaner import CleanResult, LogCleaner
from broker_core.storage.cleaner.plan import CleanPlan, StalePlanError
from broker_core.storage.files import TopicPartition
from spate.protocol.errors import ErrorCode, KafkaError

if TYPE_CHECKING:
    from broker_core.replication.partition import Partition


@dataclass(frozen=True)
class LogState:
    """What a plan's sender needs to know of a partition's log."""

    leader_epoch: int
    log_start_offset: int
    high_watermark: int
    first_dirty_offset: int
    clean_end_offset: int
    size_bytes: int
    dirty_bytes: int
    due: bool
    planner: str


class StalePlanRefused(KafkaError):
    """A plan the log no longer fits; the job plans again."""

    def __init__(self, reason: str) -> None:
        super().__init__(ErrorCode.OFFSET_OUT_OF_RANGE, f"stale plan: {reason}")


class CleanPlanService:
    """The broker's side of plans made outside it (one per broker; the cleaner is attached once started)."""

    def __init__(self) -> None:
        self.cleaner: LogCleaner | None = None
        self.assembly = PlanAssembly()
        self._applying: set[TopicPartition] = set()

    def attach(self, cleaner: LogCleaner | None) -> None:
        self.cleaner = cleaner

    def describe(self, tp: TopicPartition, partition: Partition, now_ms: int) -> LogState:
        log = partition.log
        local = log.local_log
        size = sum(segment.size for segment in local.segments)
        config = log.config
        if self.cleaner is None or not config.compact_enabled:
            start = local.log_start_offset
            return LogState(partition.leader_epoch, start, partition.high_watermark, -1, -1, size, 0, False,
                            config.spate_compaction_planner)
        cleanable = self.cleaner.cleanable_range_of(tp, log, partition.high_watermark)
        first_ts = cleanable.dirty[0].max_timestamp if cleanable.dirty else -1
        return LogState(
            partition.leader_epoch, local.log_start_offset, partition.high_watermark, cleanable.first_dirty_offset,
            cleanable.first_uncleanable_offset, size, cleanable.dirty_bytes,
            is_due(cleanable, config, now_ms=now_ms, first_dirty_timestamp=first_ts), config.spate_compaction_planner,
        )

    def check_can_clean(self, tp: TopicPartition, partition: Partition) -> None:
        if self.cleaner is None:
            raise KafkaError(ErrorCode.INVALID_CONFIG, "the log cleaner is disabled on this broker "
                             "(log.cleaner.enable=false or log.cleaner.threads=0)")
        if not partition.log.config.compact_enabled:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"{tp.topic} is not compacted (cleanup.policy="
                             f"{partition.log.config.cleanup_policy})")
        if tp in self._applying:
            raise KafkaError(ErrorCode.REQUEST_TIMED_OUT,
                             f"a plan for {tp} is being applied")

    def start_applying(self, plan: CleanPlan) -> asyncio.Task[CleanResult]:
        """Apply ``plan`` on a worker thread; the task fails with ``StalePlanRefused`` for a stale plan."""
        cleaner = self.cleaner
        assert cleaner is not None
        tp = plan.topic_partition
        self._applying.add(tp)

        async def apply() -> CleanResult:
            try:
                return await asyncio.to_thread(cleaner.apply_plan, plan)
            except StalePlanError as exc:
                raise StalePlanRefused(exc.reason) from None
            finally:
                self._applying.discard(tp)

        return asyncio.get_running_loop().create_task(apply(), name=f"clean-plan-{tp}")
