"""The Metadata answer cache: an entry serves the snapshot and brokers it was built from, and nothing else."""

from __future__ import annotations

import gc
import uuid

import pytest

from broker_core.server.metadata_answer_cache import MetadataAnswerCache, TopicEntryKey
from broker_core.server.metadata_view import PartitionMetadata, TopicMetadata
from spate.protocol.pre_encoded import PreEncoded

TOPIC_ID = uuid.UUID(int=7)
OMITTED = -(2**31)


def snapshot(leader: int = 1) -> TopicMetadata:
    return TopicMetadata("orders", TOPIC_ID, {0: PartitionMetadata(leader, 0, (leader,), (leader,))})


def answer(size: int = 10, fill: bytes = b"a") -> PreEncoded:
    return PreEncoded("MetadataResponse.MetadataResponseTopic", 12, fill * size)


def key(version: int = 12, listener: str = "PLAINTEXT", operations: int = OMITTED, topic: str = "orders"):
    return TopicEntryKey(topic, version, listener, operations)


def never_asked(broker_id: int) -> bool:
    raise AssertionError(f"is_alive({broker_id}) was not relied on")


def test_the_same_snapshot_and_brokers_are_a_hit() -> None:
    cache, topic, kept = MetadataAnswerCache(), snapshot(), answer()
    assert cache.get(key(), topic, frozenset({1}), never_asked) is None
    assert cache.put(key(), topic, frozenset({1}), {}, kept) is kept
    assert cache.get(key(), topic, frozenset({1}), never_asked) is kept
    assert (cache.stats.hits, cache.stats.misses) == (1, 1)


def test_a_new_snapshot_of_the_topic_is_a_miss_even_when_equal() -> None:
    cache, old = MetadataAnswerCache(), snapshot()
    cache.put(key(), old, frozenset({1}), {}, answer())
    assert cache.get(key(), snapshot(), frozenset({1}), never_asked) is None


def test_a_snapshot_no_longer_held_is_never_served() -> None:
    cache = MetadataAnswerCache()
    cache.put(key(), snapshot(), frozenset({1}), {}, answer())
    gc.collect()
    assert cache.get(key(), snapshot(), frozenset({1}), never_asked) is None


def test_other_reachable_brokers_are_a_miss() -> None:
    cache, topic = MetadataAnswerCache(), snapshot()
    cache.put(key(), topic, frozenset({1, 2}), {}, answer())
    assert cache.get(key(), topic, frozenset({1}), never_asked) is None
    assert cache.get(key(), topic, frozenset({1, 2, 3}), never_asked) is None


def test_a_broker_whose_liveness_the_entry_relied_on_is_asked_again() -> None:
    cache, topic, kept = MetadataAnswerCache(), snapshot(leader=2), answer()
    cache.put(key(), topic, frozenset({1}), {2: True}, kept)
    assert cache.get(key(), topic, frozenset({1}), lambda broker_id: broker_id == 2) is kept
    assert cache.get(key(), topic, frozenset({1}), lambda broker_id: False) is None


@pytest.mark.parametrize("other", [key(version=11), key(listener="CLIENT"), key(operations=0b1000),
                                   key(topic="payments")])
def test_version_listener_operations_and_topic_are_separate_entries(other: TopicEntryKey) -> None:
    cache, topic, kept = MetadataAnswerCache(), snapshot(), answer()
    cache.put(key(), topic, frozenset({1}), {}, kept)
    assert cache.get(other, topic, frozenset({1}), never_asked) is None
    cache.put(other, topic, frozenset({1}), {}, answer(fill=b"b"))
    assert cache.get(key(), topic, frozenset({1}), never_asked) is kept
    assert len(cache) == 2


def test_putting_a_key_again_replaces_its_entry() -> None:
    cache, old, new = MetadataAnswerCache(), snapshot(leader=1), snapshot(leader=2)
    cache.put(key(), old, frozenset({1, 2}), {}, answer(size=10))
    cache.put(key(), new, frozenset({1, 2}), {}, answer(size=30))
    assert len(cache) == 1 and cache.size_bytes == 30
    assert cache.get(key(), new, frozenset({1, 2}), never_asked) is not None


def test_least_recently_used_entries_go_first_when_over_the_byte_budget() -> None:
    cache, topic = MetadataAnswerCache(max_bytes=25), snapshot()
    cache.put(key(version=1), topic, frozenset({1}), {}, answer(size=10))
    cache.put(key(version=2), topic, frozenset({1}), {}, answer(size=10))
    assert cache.get(key(version=1), topic, frozenset({1}), never_asked) is not None  # v2 is now the oldest
    cache.put(key(version=3), topic, frozenset({1}), {}, answer(size=10))
    assert cache.get(key(version=2), topic, frozenset({1}), never_asked) is None
    assert cache.get(key(version=1), topic, frozenset({1}), never_asked) is not None
    assert cache.size_bytes == 20 and cache.stats.evictions == 1


def test_an_answer_larger_than_the_budget_is_returned_but_not_kept() -> None:
    cache, kept = MetadataAnswerCache(max_bytes=5), answer(size=10)
    assert cache.put(key(), snapshot(), frozenset({1}), {}, kept) is kept
    assert len(cache) == 0 and cache.size_bytes == 0


def test_a_negative_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        MetadataAnswerCache(max_bytes=-1)
