"""OffsetMap: the bounded key -> latest offset map (offset_map.py)."""

from __future__ import annotations

import pytest

from broker_core.storage.cleaner.offset_map import OffsetMap


def test_a_buffer_holds_as_many_keys_as_kafkas_map_at_its_load_factor():
    assert OffsetMap.for_buffer(24 * 1000).capacity == 900
    assert OffsetMap.for_buffer(0).capacity == 1


def test_put_keeps_the_latest_offset_and_reports_what_it_replaced():
    offsets = OffsetMap(4)
    assert offsets.put(b"a", 3) is None
    assert offsets.put(b"a", 7) == 3
    assert offsets.get(b"a") == 7
    assert offsets.get(b"missing") == -1
    assert offsets.latest_offset == 7


def test_a_full_map_refuses_new_keys_but_updates_known_ones():
    offsets = OffsetMap(2)
    offsets.put(b"a", 1)
    offsets.put(b"b", 2)
    assert offsets.is_full
    offsets.put(b"a", 3)
    with pytest.raises(OverflowError):
        offsets.put(b"c", 4)


def test_a_segments_keys_go_in_whole_or_not_at_all():
    offsets = OffsetMap(3)
    assert offsets.put_latest({b"a": 1, b"b": 2})
    assert not offsets.put_latest({b"a": 5, b"c": 6, b"d": 7})  # two new keys where one fits
    assert sorted(offsets.items()) == [(b"a", 1), (b"b", 2)]
    assert offsets.put_latest({b"a": 5, b"c": 6})
    assert sorted(offsets.items()) == [(b"a", 5), (b"b", 2), (b"c", 6)] and offsets.latest_offset == 6


def test_a_batchs_keys_are_looked_up_at_once():
    offsets = OffsetMap.of({b"a": 4, b"b": 9})
    assert offsets.latest_of([b"a", None, b"z", b"b"]) == [4, -1, -1, 9]


def test_a_map_made_elsewhere_holds_exactly_its_entries():
    offsets = OffsetMap.of({b"k1": 10, b"k2": 12})
    assert sorted(offsets.items()) == [(b"k1", 10), (b"k2", 12)]


def test_a_map_keyed_by_hashes_looks_a_batchs_keys_up_through_its_hash():
    from broker_core.server.plan_assembly import HashedOffsetMap, key_hash

    offsets = HashedOffsetMap.of({key_hash(b"a"): 4})
    assert offsets.latest_of([b"a", None, b"b"]) == [4, -1, -1]
