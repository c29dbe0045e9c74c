"""Kafka's KafkaScheduler: the broker's background tasks, and the periodic log jobs it runs.

Every task the broker starts beside serving requests is held here, so a stop
cancels them all (:meth:`BrokerScheduler.cancel_all`) and then waits for them
(:meth:`BrokerScheduler.join`). A periodic job runs every interval after the
previous run ended, so runs of one job never overlap; a job that fails is
logged and runs again at its next interval. An interval that is not positive,
or 2**31 ms or more, turns a job off.

The log jobs (:func:`schedule_log_jobs`) are Kafka's log manager's: retention
(``log.retention.check.interval.ms``), scheduled flushes, recovery-point and
high-watermark checkpoints, and the deletion of segments whose delay passed.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import Awaitable, Callable, Coroutine

from broker_core.config.broker_config import BrokerConfig
from broker_core.metrics.broker_metrics import BrokerMetrics
from broker_core.server.replica_manager import ReplicaManager
from broker_core.storage.log_flusher import run_flushes
from broker_core.storage.log_manager import LogManager

logger = logging.getLogger(__name__)


class BrokerScheduler:
    def __init__(self) -> None:
        self._tasks: list[asyncio.Task[None]] = []

    def spawn(self, coroutine: Coroutine[object, object, object], name: str) -> None:
        """Run ``coroutine`` as a task until it ends or the broker stops."""
        self._tasks.append(asyncio.create_task(coroutine, name=name))

    def schedule(self, name: str, interval_ms: int, job: Callable[[], object]) -> None:
        """Run ``job`` every ``interval_ms`` (off when the interval is not positive or past 2**31)."""
        if 0 < interval_ms < 2**31:
            self.spawn(_every(name, interval_ms, job), name=name)

    def cancel_all(self) -> None:
        for task in self._tasks:
            task.cancel()

    async def join(self) -> None:
        """Wait for every task to end (cancelled ones too), whatever they raise."""
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def _every(name: str, interval_ms: int, job: Callable[[], object]) -> None:
    """Run ``job`` every ``interval_ms``; a job returning an awaitable is awaited, so runs never overlap."""
    while True:
        await asyncio.sleep(interval_ms / 1000)
        try:
            result = job()
            if inspect.isawaitable(result):
                await result
        except Exception:
            logger.exception("background job %s failed", name)


def schedule_log_jobs(scheduler: BrokerScheduler, config: BrokerConfig, replicas: ReplicaManager,
                      log_manager: LogManager, clock: Callable[[], int], metrics: BrokerMetrics | None) -> None:
    def run_retention() -> None:
        deleted = replicas.log_manager.run_retention(clock())
        if deleted:
            logger.info("retention deleted %d segment(s)", deleted)

    jobs = [
        ("retention", config.get_int("log.retention.check.interval.ms"), run_retention),
        # Also fsyncs segments that rolled, which advances the recovery point.
        ("flush", min(config.log_flush_interval_ms, 1000), _flush_job(log_manager, clock, metrics)),
        ("checkpoint", config.get_int("log.flush.offset.checkpoint.interval.ms"), replicas.checkpoint_all),
        ("log-start-offset-checkpoint", config.get_int("log.flush.start.offset.checkpoint.interval.ms"),
         lambda: log_manager.checkpoint(recovery_points=False)),
        # The fsyncs run off the event loop: on a busy disk they would stall every connection.
        ("high-watermark-checkpoint", config.get_int("replica.high.watermark.checkpoint.interval.ms"),
         lambda: asyncio.to_thread(replicas.high_watermarks_writer())),
        ("segment-deletes", 1000, lambda: log_manager.run_pending_deletes(clock())),
        ("producer-expiration", config.get_int("producer.id.expiration.check.interval.ms"),
         lambda: replicas.remove_expired_producers(clock())),
    ]
    for name, interval_ms, job in jobs:
        scheduler.schedule(name, interval_ms, job)


def _flush_job(log_manager: LogManager, clock: Callable[[], int],
               metrics: BrokerMetrics | None) -> Callable[[], Awaitable[int]]:
    """Scheduled flushes: prepared and completed on the loop, their fsyncs on a worker thread."""
    async def flush() -> int:
        pending = log_manager.begin_scheduled_flushes(clock())
        if not pending:
            return 0
        await asyncio.to_thread(run_flushes, pending)
        return log_manager.complete_flushes(pending)

    if metrics is None:
        return flush
    log_flush = metrics.log_flush
    return lambda: log_flush.timed_async(flush)
