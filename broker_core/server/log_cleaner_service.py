"""Running storage's log cleaner inside the broker.

The cleaner threads read and write files on their own; whatever touches a
live log (choosing a log, swapping cleaned segments in, checkpoints) they
hand to the event loop, which owns every log, and wait for it. Every hosted
partition is offered, led or followed: each replica cleans its own log.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Callable, TypeVar

from broker_core.config.broker_config import BrokerConfig
from broker_core.server.replica_manager import ReplicaManager
from broker_core.storage.cleaner.cleaner_checkpoint import CleanerCheckpoints
from broker_core.storage.cleaner.log_cleaner import CleanableLog, CleanerConfig, CleanerStopped, LogCleaner
from broker_core.storage.files import TopicPartition

T = TypeVar("T")

# How long a cleaner thread waits for the loop before checking whether it should stop.
_OWNER_POLL_S = 1.0


def cleaner_config(config: BrokerConfig) -> CleanerConfig:
    return CleanerConfig(
        enable=config.get_bool("log.cleaner.enable"),
        threads=config.get_int("log.cleaner.threads"),
        backoff_ms=config.get_int("log.cleaner.backoff.ms"),
        dedupe_buffer_size=config.get_int("log.cleaner.dedupe.buffer.size"),
        io_max_bytes_per_second=config.get_float("log.cleaner.io.max.bytes.per.second"),
    )


def start_log_cleaner(
    config: BrokerConfig, replicas: ReplicaManager, loop: asyncio.AbstractEventLoop, clock: Callable[[], int]
) -> LogCleaner | None:
    """Start the cleaner threads (None when ``log.cleaner.enable`` is false or there are no threads)."""
    settings = cleaner_config(config)
    if not settings.enable or settings.threads == 0:
        return None
    log_manager = replicas.log_manager

    def hosted() -> list[CleanableLog]:
        return [
            CleanableLog(TopicPartition(p.topic, p.index), p.log, p.high_watermark)
            for p in replicas
            if not p.log.local_log.is_closed
        ]

    cleaner = LogCleaner(
        settings, hosted, CleanerCheckpoints(log_manager.failures.live_dirs),
        run_on_owner=_on_loop(loop), clock=clock,
    )
    cleaner.start()
    return cleaner


def _on_loop(loop: asyncio.AbstractEventLoop) -> Callable[[Callable[[], T]], T]:
    def run(fn: Callable[[], T]) -> T:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()

        def call() -> None:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn())
                except BaseException as exc:
                    future.set_exception(exc)

        try:
            loop.call_soon_threadsafe(call)
        except RuntimeError:
            raise CleanerStopped() from None  # the loop closed: the broker is gone
        while True:
            try:
                return future.result(timeout=_OWNER_POLL_S)
            except concurrent.futures.TimeoutError:
                if loop.is_closed():
                    raise CleanerStopped() from None

    return run
