"""Collectors run on the broker's event loop, whichever thread scrapes."""

from __future__ import annotations

import asyncio
import threading

from prometheus_client.core import GaugeMetricFamily

from broker_core.metrics.loop_collector import LoopCollector


class ThreadRecorder:
    def __init__(self) -> None:
        self.threads: list[int] = []

    def collect(self):
        self.threads.append(threading.get_ident())
        yield GaugeMetricFamily("probe", "where collection ran", value=1)


class Broken:
    def collect(self):
        raise RuntimeError("boom")


def test_a_scrape_from_another_thread_runs_the_collectors_on_the_loop() -> None:
    async def scenario() -> None:
        recorder = ThreadRecorder()
        collector = LoopCollector(asyncio.get_running_loop(), [Broken(), recorder])
        families = await asyncio.to_thread(lambda: list(collector.collect()))
        assert [f.name for f in families] == ["probe"]  # the broken collector is skipped, not fatal
        assert recorder.threads == [threading.get_ident()]
        # On the loop's own thread it runs inline.
        assert [f.name for f in collector.collect()] == ["probe"]

    asyncio.run(scenario())


def test_a_loop_that_does_not_answer_yields_nothing_in_bounded_time() -> None:
    loop = asyncio.new_event_loop()  # never run
    try:
        collector = LoopCollector(loop, [ThreadRecorder()], timeout_s=0.2)
        result: list[object] = []
        thread = threading.Thread(target=lambda: result.extend(collector.collect()))
        thread.start()
        thread.join(5)
        assert not thread.is_alive() and result == []
    finally:
        loop.close()


def test_a_closed_loop_yields_nothing() -> None:
    loop = asyncio.new_event_loop()
    collector = LoopCollector(loop, [ThreadRecorder()])
    loop.close()
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.extend(collector.collect()))
    thread.start()
    thread.join(5)
    assert result == []
