"""Runs a broker's collectors on its event loop, whichever thread Prometheus scrapes from.

The broker's state (partitions, groups, transactions, counters) is owned by
its event loop and changes between any two Python bytecodes there. Reading
it from the HTTP server's thread could see a dictionary change size mid-way;
so a scrape hands the reading to the loop (``call_soon_threadsafe``) and
waits for the families it builds. A scrape costs the loop one short callback;
a loop that does not answer within ``timeout_s`` yields no metrics for that
scrape (Prometheus marks the target's samples missing rather than stale).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from typing import Any, Iterable, Protocol

logger = logging.getLogger(__name__)

SCRAPE_TIMEOUT_S = 10.0


class Collector(Protocol):
    def collect(self) -> Iterable[object]: ...


class LoopCollector:
    def __init__(self, loop: asyncio.AbstractEventLoop, collectors: list[Collector], *,
                 timeout_s: float = SCRAPE_TIMEOUT_S) -> None:
        self._loop = loop
        self._loop_thread = threading.get_ident()
        self._collectors = collectors
        self._timeout_s = timeout_s

    def collect(self) -> Iterable[Any]:
        if threading.get_ident() == self._loop_thread:
            return self._collect_here()
        result: concurrent.futures.Future[list[Any]] = concurrent.futures.Future()

        def run() -> None:
            if result.set_running_or_notify_cancel():
                result.set_result(self._collect_here())

        try:
            self._loop.call_soon_threadsafe(run)
            return result.result(timeout=self._timeout_s)
        except RuntimeError:  # the loop is closed: the broker stopped
            return []
        except concurrent.futures.TimeoutError:
            result.cancel()
            logger.warning("metrics scrape: the event loop did not answer within %.0f s", self._timeout_s)
            return []

    def _collect_here(self) -> list[Any]:
        families: list[Any] = []
        for collector in self._collectors:
            try:
                families.extend(collector.collect())
            except Exception:  # one broken collector must not hide the others
                logger.exception("metrics collector %s failed", type(collector).__name__)
        return families
