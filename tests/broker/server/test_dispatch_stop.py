"""Stopping the request dispatcher: nothing new is taken, queued requests are dropped, parked ones get a grace."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from broker_core.server.dispatch import RequestDispatcher
from spate.protocol.api_keys import ApiKey


def request(api_key: ApiKey = ApiKey.METADATA) -> Any:
    return SimpleNamespace(api_key=api_key)


def test_queued_requests_are_dropped_and_later_ones_refused_on_stop() -> None:
    async def scenario() -> None:
        handled: list[Any] = []
        dispatcher = RequestDispatcher({"L": {ApiKey.METADATA: handled.append}}, queue_size=10, workers=1)
        # Not started: whatever is submitted stays queued.
        queued = [await dispatcher.submit(request(), "L") for _ in range(3)]
        await asyncio.wait_for(dispatcher.stop(), 1)
        assert all(future.cancelled() for future in queued) and handled == []
        late = await dispatcher.submit(request(), "L")
        assert late.cancelled()

    asyncio.run(scenario())


def test_a_submitter_waiting_on_a_full_queue_gets_a_dropped_request_when_the_dispatcher_stops() -> None:
    async def scenario() -> None:
        dispatcher = RequestDispatcher({"L": {}}, queue_size=1, workers=1)
        await dispatcher.submit(request(), "L")
        blocked = asyncio.create_task(dispatcher.submit(request(), "L"))
        await asyncio.sleep(0)
        await asyncio.wait_for(dispatcher.stop(), 1)
        future = await asyncio.wait_for(blocked, 1)
        assert future.cancelled()

    asyncio.run(scenario())


def test_parked_requests_complete_within_the_grace_and_are_dropped_after_it() -> None:
    async def scenario() -> None:
        async def quick() -> str:
            await asyncio.sleep(0.05)
            return "answered"

        async def slow() -> str:
            await asyncio.sleep(30)
            return "never"

        handlers = {"L": {ApiKey.FETCH: lambda r: quick(), ApiKey.JOIN_GROUP: lambda r: slow()}}
        dispatcher = RequestDispatcher(handlers, queue_size=10, workers=2)
        dispatcher.start()
        answered = await dispatcher.submit(request(ApiKey.FETCH), "L")
        parked = await dispatcher.submit(request(ApiKey.JOIN_GROUP), "L")
        await asyncio.sleep(0.01)
        loop = asyncio.get_running_loop()
        started = loop.time()
        await asyncio.wait_for(dispatcher.stop(grace_s=0.3), 2)
        assert 0.25 <= loop.time() - started < 1.0
        assert answered.result() == "answered"
        assert parked.cancelled()

    asyncio.run(scenario())
