"""How idle the event loop is, and the request queue's length."""

from __future__ import annotations

import asyncio
import math
import time

from broker_core.metrics.network_metrics import EventLoopIdle, NetworkCollector
from tests.broker.metrics.samples import registry_of, value


def test_a_loop_that_only_waits_is_nearly_all_idle() -> None:
    async def scenario() -> float:
        idle = EventLoopIdle()
        assert idle.install(asyncio.get_running_loop())
        idle.idle_ratio_since_last_call()
        await asyncio.sleep(0.3)
        ratio = idle.idle_ratio_since_last_call()
        idle.uninstall()
        return ratio

    assert asyncio.run(scenario()) > 0.8


def test_a_loop_running_code_is_not_idle() -> None:
    async def scenario() -> float:
        idle = EventLoopIdle()
        idle.install(asyncio.get_running_loop())
        idle.idle_ratio_since_last_call()
        deadline = time.perf_counter() + 0.3
        while time.perf_counter() < deadline:
            await asyncio.sleep(0)  # runs callbacks without ever waiting in select
        ratio = idle.idle_ratio_since_last_call()
        idle.uninstall()
        return ratio

    assert asyncio.run(scenario()) < 0.2


def test_uninstalling_gives_the_loop_its_selector_back() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        original = loop._selector.select  # type: ignore[attr-defined]
        idle = EventLoopIdle()
        idle.install(loop)
        assert loop._selector.select != original  # type: ignore[attr-defined]
        idle.uninstall()
        assert loop._selector.select == original  # type: ignore[attr-defined]
        assert math.isnan(idle.idle_ratio_since_last_call())

    asyncio.run(scenario())


def test_the_collector_reports_queue_size_and_idle_time() -> None:
    idle = EventLoopIdle()
    idle.idle_s = 2.5
    registry = registry_of(NetworkCollector(idle, lambda: 7))
    assert value(registry, "kafka_network_requestchannel_requestqueuesize") == 7
    assert value(registry, "spate_eventloop_idle_seconds_total") == 2.5
    assert math.isnan(value(registry, "kafka_network_socketserver_networkprocessoravgidlepercent"))


def test_two_brokers_on_one_loop_stop_timing_in_any_order() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        original = loop._selector.select  # type: ignore[attr-defined]
        first, second = EventLoopIdle(), EventLoopIdle()
        first.install(loop)
        second.install(loop)
        first.uninstall()  # under the second's wrapper: becomes a pass-through
        await asyncio.sleep(0.05)
        assert first.idle_s == 0
        assert second.idle_s > 0
        second.uninstall()
        await asyncio.sleep(0.01)
        assert loop._selector.select is not original  # the first's pass-through stays below
        idle = second.idle_s
        await asyncio.sleep(0.05)
        assert second.idle_s == idle

    asyncio.run(scenario())
