"""FetchSessionCache: bounded slots and Kafka's eviction rules (stale first, then the least valuable evictable)."""

from __future__ import annotations

import random

from broker_core.server.fetch_session.cache import FetchSessionCache
from broker_core.server.fetch_session.session import CachedPartition
from spate.protocol.fetch_session import INVALID_SESSION_ID

EVICTION_MS = 1000


def partitions(count: int) -> dict:
    return {("t", i): CachedPartition("t", None, request=None) for i in range(count)}


def new_cache(slots: int = 2) -> FetchSessionCache:
    return FetchSessionCache(max_entries=slots, eviction_ms=EVICTION_MS, rng=random.Random(7))


def create(cache: FetchSessionCache, now: int, size: int, *, privileged: bool = False) -> int:
    return cache.maybe_create_session(now, privileged, size, False, lambda: partitions(size))


def test_sessions_get_distinct_positive_ids_and_epoch_one() -> None:
    cache = new_cache(slots=10)
    ids = {create(cache, 0, 1) for _ in range(10)}
    assert len(ids) == 10 and all(i > 0 for i in ids)
    assert all(cache.get(i).epoch == 1 for i in ids)
    assert cache.total_partitions == 10


def test_zero_slots_never_creates_a_session() -> None:
    assert create(new_cache(slots=0), 0, 5) == INVALID_SESSION_ID


def test_a_full_cache_of_young_sessions_refuses_a_consumer_session() -> None:
    cache = new_cache()
    create(cache, 0, 1), create(cache, 0, 1)
    assert create(cache, 10, 100) == INVALID_SESSION_ID
    assert len(cache) == 2 and cache.evictions == 0


def test_a_stale_session_is_evicted_for_any_new_one() -> None:
    cache = new_cache()
    stale = create(cache, 0, 50)
    fresh = create(cache, 900, 50)
    new = create(cache, 0 + EVICTION_MS + 1, 1)
    assert new != INVALID_SESSION_ID
    assert cache.get(stale) is None and cache.get(fresh) is not None
    assert cache.evictions == 1


def test_a_follower_evicts_a_young_consumer_session_but_not_a_young_follower_session() -> None:
    cache = new_cache()
    follower = create(cache, 0, 1, privileged=True)
    consumer = create(cache, 0, 500)
    newcomer = create(cache, 10, 1, privileged=True)
    assert newcomer != INVALID_SESSION_ID and cache.get(consumer) is None and cache.get(follower) is not None
    assert create(cache, 20, 1000, privileged=True) == INVALID_SESSION_ID


def test_an_old_session_with_fewer_partitions_is_evicted_for_one_with_more() -> None:
    cache = new_cache()
    small, large = create(cache, 0, 2), create(cache, 0, 20)
    # Used again after the eviction time since creation: both become evictable by anyone, but stay fresh.
    later = EVICTION_MS + 5
    cache.touch(cache.get(small), later)
    cache.touch(cache.get(large), later)
    assert create(cache, later + 1, 1) == INVALID_SESSION_ID  # fewer partitions than any: refused
    newcomer = create(cache, later + 1, 10)
    assert newcomer != INVALID_SESSION_ID
    assert cache.get(small) is None and cache.get(large) is not None
    assert cache.evictions == 1


def test_a_consumer_never_evicts_a_fresh_follower_session() -> None:
    cache = new_cache(slots=1)
    follower = create(cache, 0, 1, privileged=True)
    cache.touch(cache.get(follower), EVICTION_MS + 5)
    assert create(cache, EVICTION_MS + 6, 10_000) == INVALID_SESSION_ID


def test_removing_and_touching_keep_the_partition_count() -> None:
    cache = new_cache(slots=5)
    first, second = create(cache, 0, 3), create(cache, 0, 4)
    session = cache.get(first)
    session.partitions.update({("u", 0): CachedPartition("u", None, request=None)})
    cache.touch(session, 1)
    assert cache.total_partitions == 8
    cache.remove(second)
    assert cache.total_partitions == 4 and len(cache) == 1
    assert cache.remove(second) is None
