"""Executor consumers kept between tasks: one per settings and partition, bounded in number and idle time."""

from __future__ import annotations

from spark_ext.consumer_cache import ConsumerCache, KeptConsumer
from spate.client import TopicPartition

A, B, C = (TopicPartition("t", p) for p in range(3))


class FakeConsumer:
    def __init__(self) -> None:
        self.closed = False

    def close(self, timeout_ms=None) -> None:
        self.closed = True


def kept(next_offset: int = 0) -> KeptConsumer:
    return KeptConsumer(FakeConsumer(), next_offset)  # type: ignore[arg-type]


def test_a_released_consumer_is_lent_once_to_the_next_task_of_the_same_partition_and_settings():
    cache = ConsumerCache()
    first = kept(7)
    cache.release("s", A, first)
    assert cache.acquire("other settings", A) is None
    assert cache.acquire("s", B) is None
    assert cache.acquire("s", A) is first
    assert cache.acquire("s", A) is None  # taken out while lent


def test_over_capacity_the_least_recently_released_consumer_is_closed():
    cache = ConsumerCache(capacity=2)
    a, b, c = kept(), kept(), kept()
    cache.release("s", A, a)
    cache.release("s", B, b)
    cache.release("s", C, c)
    assert a.consumer.closed and not b.consumer.closed and not c.consumer.closed
    assert len(cache) == 2 and cache.acquire("s", A) is None


def test_consumers_idle_longer_than_the_timeout_are_closed_on_next_use():
    now = [0.0]
    cache = ConsumerCache(idle_timeout_s=60, clock=lambda: now[0])
    old = kept()
    cache.release("s", A, old)
    now[0] = 30.0
    cache.release("s", B, kept())
    now[0] = 61.0
    assert cache.acquire("s", B) is not None
    assert old.consumer.closed and len(cache) == 0


def test_releasing_a_second_consumer_for_a_partition_closes_the_first():
    cache = ConsumerCache()
    first, second = kept(), kept()
    cache.release("s", A, first)
    cache.release("s", A, second)
    assert first.consumer.closed and cache.acquire("s", A) is second


def test_closed_consumers_are_neither_kept_nor_lent():
    cache = ConsumerCache()
    gone = kept()
    gone.consumer.close()
    cache.release("s", A, gone)
    assert len(cache) == 0
    fine = kept()
    cache.release("s", A, fine)
    fine.consumer.close()
    assert cache.acquire("s", A) is None


def test_close_closes_every_kept_consumer():
    cache = ConsumerCache()
    items = [kept(), kept()]
    cache.release("s", A, items[0])
    cache.release("s", B, items[1])
    cache.close()
    assert all(item.consumer.closed for item in items) and len(cache) == 0


def test_leftover_records_older_than_their_time_to_live_are_dropped_and_the_consumer_seeks():
    now = [0.0]
    cache = ConsumerCache(leftover_ttl_s=10, clock=lambda: now[0])
    item = kept(50)
    item.leftover = ["fetched batch"]  # type: ignore[list-item]
    cache.release("s", A, item)
    now[0] = 11.0
    lent = cache.acquire("s", A)
    assert lent is item and lent.leftover == [] and lent.next_offset == -1
