"""queued.max.request.bytes: a pool of request memory shared by connections, not strict as Kafka's is not."""

from __future__ import annotations

import asyncio

from broker_core.server.memory_pool import MemoryPool


def test_a_pool_of_zero_or_less_is_unbounded() -> None:
    for capacity in (-1, 0):
        pool = MemoryPool(capacity)
        pool.allocate(10 * 1024**3)
        assert not pool.bounded and not pool.exhausted


def test_an_allocation_larger_than_what_is_left_succeeds_and_exhausts_the_pool() -> None:
    pool = MemoryPool(100)
    pool.allocate(60)
    assert not pool.exhausted
    pool.allocate(60)
    assert pool.exhausted and pool.used == 120 and pool.available == -20
    pool.release(60)
    assert not pool.exhausted and pool.used == 60


def test_waiters_are_released_once_some_memory_is_free_again() -> None:
    async def scenario() -> list[str]:
        pool = MemoryPool(100)
        pool.allocate(150)
        order: list[str] = []

        async def wait(name: str) -> None:
            await pool.wait_for_memory()
            order.append(name)
            pool.allocate(100)  # the first one to run uses up what was freed: the other waits again

        waiters = [asyncio.create_task(wait(name)) for name in ("a", "b")]
        await asyncio.sleep(0)
        pool.release(40)
        await asyncio.sleep(0)
        assert order == [] and pool.exhausted  # still 10 bytes over
        pool.release(20)
        await asyncio.sleep(0.01)
        assert order == ["a"]
        pool.release(100)
        await asyncio.wait_for(asyncio.gather(*waiters), 1)
        return order

    assert asyncio.run(scenario()) == ["a", "b"]


def test_waiting_returns_at_once_while_memory_is_left() -> None:
    async def scenario() -> None:
        pool = MemoryPool(10)
        pool.allocate(9)
        await asyncio.wait_for(pool.wait_for_memory(), 0.1)

    asyncio.run(scenario())


def test_a_cancelled_waiter_does_not_block_the_others() -> None:
    async def scenario() -> None:
        pool = MemoryPool(10)
        pool.allocate(10)
        cancelled = asyncio.create_task(pool.wait_for_memory())
        other = asyncio.create_task(pool.wait_for_memory())
        await asyncio.sleep(0)
        cancelled.cancel()
        pool.release(5)
        await asyncio.wait_for(other, 1)

    asyncio.run(scenario())
