"""A loop that asks ``raise_if_cancelled`` at each turn ends when its task is cancelled, even if a step swallowed
the cancel (as Python 3.11's ``wait_for`` can, handing back its awaitable's error instead)."""

from __future__ import annotations

import asyncio

from broker_core.cancellation import raise_if_cancelled


async def retrying_loop(turns: list[int], guarded: bool) -> None:
    while True:
        if guarded:
            raise_if_cancelled()
        turns.append(len(turns))
        try:
            await asyncio.sleep(0.01)
        except asyncio.CancelledError:  # the swallowed cancel: taken for a failure to retry
            continue


def test_a_guarded_loop_ends_when_its_task_is_cancelled() -> None:
    async def scenario() -> None:
        turns: list[int] = []
        task = asyncio.create_task(retrying_loop(turns, guarded=True))
        await asyncio.sleep(0.05)
        task.cancel()
        done, _ = await asyncio.wait([task], timeout=2)
        assert done == {task} and task.cancelled()

    asyncio.run(scenario())


def test_a_swallowed_cancel_is_still_counted_by_the_task() -> None:
    async def swallowing() -> int:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            pass
        task = asyncio.current_task()
        assert task is not None
        return task.cancelling()

    async def scenario() -> None:
        task = asyncio.create_task(swallowing())
        await asyncio.sleep(0)
        task.cancel()
        assert await task == 1  # what raise_if_cancelled reads

    asyncio.run(scenario())
