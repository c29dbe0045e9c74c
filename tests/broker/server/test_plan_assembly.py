"""Compaction plans over the wire: 24-byte entries (MD5 of the key, offset), chunks assembled per partition,
and a hashed plan applied by the cleaner keeps exactly the records a plan by key bytes keeps."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from broker_core.server.plan_assembly import (
    ENTRY_SIZE,
    HashedOffsetMap,
    InvalidPlanError,
    PlanAssembly,
    PlanChunk,
    decode_entries,
    key_hash,
)
from broker_core.storage.cleaner.plan import StalePlanError
from broker_core.storage.files import TopicPartition
from spate.client.admin.clean_plans import pack_entries
from spate.protocol import ErrorCode
from tests.broker.storage.batch_factory import FakeClock
from tests.broker.storage.cleaner.cleaner_fixture import TP, append, cleaner_for, contents, open_log

OTHER = TopicPartition("orders", 1)


def h(key: str) -> bytes:
    return hashlib.md5(key.encode()).digest()


def chunk(number: int, entries: dict[str, int], *, plan_id: str = "p1", start: int = 0, end: int = 100) -> PlanChunk:
    return PlanChunk(plan_id, number, 3, start, end, pack_entries({h(k): o for k, o in entries.items()}))


def test_a_key_is_named_by_the_md5_of_its_bytes() -> None:
    assert key_hash(b"user-1") == hashlib.md5(b"user-1").digest()
    assert len(key_hash(b"")) == 16


def test_entries_round_trip_through_their_24_byte_form() -> None:
    packed = pack_entries([(h("a"), 5), (h("b"), 99)])
    assert len(packed) == 2 * ENTRY_SIZE
    assert list(decode_entries(packed, 0, 100)) == [(h("a"), 5), (h("b"), 99)]


def test_a_key_hash_must_have_16_bytes() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        pack_entries([(b"short", 1)])


def test_entries_that_are_not_whole_are_invalid() -> None:
    with pytest.raises(InvalidPlanError, match="24 bytes each") as refused:
        list(decode_entries(b"x" * 30, 0, 100))
    assert refused.value.code == ErrorCode.INVALID_REQUEST


@pytest.mark.parametrize("offset", [-1, 9, 20])
def test_an_entry_outside_the_plans_range_is_invalid(offset: int) -> None:
    with pytest.raises(InvalidPlanError, match=rf"offset {offset}, outside \[10, 20\)"):
        list(decode_entries(pack_entries([(h("a"), offset)]), 10, 20))


def test_chunks_of_one_plan_add_up_and_the_latest_offset_of_a_key_wins() -> None:
    assembly = PlanAssembly()
    assembly.add(TP, chunk(0, {"a": 1, "b": 2}), now_ms=0)
    pending = assembly.add(TP, chunk(1, {"a": 7, "c": 3}), now_ms=1)
    assert pending.chunks == 2
    assert pending.latest == {h("a"): 7, h("b"): 2, h("c"): 3}
    plan = pending.to_plan(TP)
    assert (plan.dirty_start, plan.dirty_end, plan.origin) == (0, 100, "spark")
    assert plan.latest_offsets.get(b"a") == 7 and plan.latest_offsets.get(b"unknown") == -1


def test_a_chunk_out_of_order_drops_the_plan() -> None:
    assembly = PlanAssembly()
    assembly.add(TP, chunk(0, {"a": 1}), now_ms=0)
    with pytest.raises(InvalidPlanError, match="chunk 2 does not follow chunk 0"):
        assembly.add(TP, chunk(2, {"b": 2}), now_ms=0)
    assert TP not in assembly


def test_a_chunk_for_another_range_drops_the_plan() -> None:
    assembly = PlanAssembly()
    assembly.add(TP, chunk(0, {"a": 1}), now_ms=0)
    with pytest.raises(InvalidPlanError, match="does not follow"):
        assembly.add(TP, chunk(1, {"b": 2}, end=50), now_ms=0)


def test_chunk_zero_of_a_new_plan_replaces_the_one_in_progress() -> None:
    assembly = PlanAssembly()
    assembly.add(TP, chunk(0, {"a": 1}), now_ms=0)
    assembly.add(TP, chunk(0, {"b": 2}, plan_id="p2"), now_ms=0)
    with pytest.raises(InvalidPlanError, match="no plan 'p1' in progress"):
        assembly.add(TP, chunk(1, {"c": 3}), now_ms=0)
    assert assembly.take(TP).latest == {h("b"): 2}


def test_partitions_assemble_their_plans_apart() -> None:
    assembly = PlanAssembly()
    assembly.add(TP, chunk(0, {"a": 1}), now_ms=0)
    assembly.add(OTHER, chunk(0, {"a": 2}), now_ms=0)
    assert assembly.take(TP).latest == {h("a"): 1}
    assert assembly.take(OTHER).latest == {h("a"): 2}


def test_an_idle_plan_is_forgotten() -> None:
    assembly = PlanAssembly(max_idle_ms=1_000)
    assembly.add(TP, chunk(0, {"a": 1}), now_ms=0)
    with pytest.raises(InvalidPlanError, match="expired"):
        assembly.add(TP, chunk(1, {"b": 1}), now_ms=1_001)


def test_a_hashed_map_answers_for_the_key_it_hashes() -> None:
    offsets = HashedOffsetMap.of({key_hash(b"k1"): 4})
    assert offsets.get(b"k1") == 4
    assert offsets.get(b"k2") == -1


def test_a_hashed_plan_compacts_as_the_broker_would(tmp_path: Path) -> None:
    clock = FakeClock(1_000)
    log = open_log(tmp_path / "orders-0", clock)
    for value in range(3):
        append(log, [("a", f"a{value}"), ("b", f"b{value}")])
        log.local_log.roll()
    append(log, [("a", "active")])
    plan = PlanAssembly().add(TP, chunk(0, {"a": 4, "b": 5}, end=6), now_ms=0).to_plan(TP)
    cleaner_for(log, clock).apply_plan(plan)
    assert contents(log) == [(4, "a", "a2"), (5, "b", "b2"), (6, "a", "active")]


def test_a_hashed_plan_that_does_not_start_at_the_checkpoint_is_stale(tmp_path: Path) -> None:
    clock = FakeClock(1_000)
    log = open_log(tmp_path / "orders-0", clock)
    for value in range(3):
        append(log, [("a", f"a{value}")])
        log.local_log.roll()
    plan = PlanAssembly().add(TP, chunk(0, {"a": 1}, start=1, end=2), now_ms=0).to_plan(TP)
    with pytest.raises(StalePlanError, match="clean up to 0 now; the plan starts at 1"):
        cleaner_for(log, clock).apply_plan(plan)
