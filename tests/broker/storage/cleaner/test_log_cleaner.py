"""Cleaning a log keeps the latest record of every key and nothing else it may drop (log_cleaner.py,
segment_cleaner.py, planner.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.storage.checkpoint import OffsetCheckpointFile
from broker_core.storage.cleaner.cleaner_checkpoint import CLEANER_OFFSET_CHECKPOINT
from broker_core.storage.cleaner.plan import CleanPlan, StalePlanError
from broker_core.storage.unified_log import UnifiedLog
from spate.records import iter_batches
from spate.records.compression import Compression
from tests.broker.storage.batch_factory import FakeClock
from tests.broker.storage.cleaner.cleaner_fixture import TP, append, cleaner_for, contents, open_log


def fill(log: UnifiedLog, rounds: int, keys: int, *, codec: Compression = Compression.NONE) -> dict[str, str]:
    """``rounds`` updates of ``keys`` keys, a segment per round; return the latest value of each key."""
    latest = {}
    for r in range(rounds):
        pairs = [(f"k{k}", f"v{r}-{k}") for k in range(keys)]
        append(log, pairs, compression=codec)
        latest.update(pairs)
        log.local_log.roll()
    return latest


def latest_view(log: UnifiedLog) -> dict[str, str | None]:
    return {key: value for _, key, value in contents(log)}


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.SNAPPY])
def test_cleaning_keeps_the_latest_record_of_every_key_at_its_offset(log_dir: Path, clock: FakeClock, codec):
    log = open_log(log_dir, clock)
    latest = fill(log, rounds=4, keys=5, codec=codec)
    before = contents(log)
    result = cleaner_for(log, clock).clean_once()
    assert result is not None and result.plan.dirty_end == log.local_log.active_segment.base_offset
    after = contents(log)
    assert {key: value for _, key, value in after} == latest
    assert len(after) == 5
    assert set(after) <= set(before)  # same offsets, same records
    assert [offset for offset, _, _ in after] == sorted(offset for offset, _, _ in after)
    assert log.log_end_offset == 20


def test_reads_that_start_inside_a_removed_range_continue_at_the_next_offset(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    fill(log, rounds=3, keys=4)
    cleaner_for(log, clock).clean_once()
    assert contents(log, start=1)[0][0] == 8  # offsets 0..7 were superseded


def test_records_newer_than_the_plan_are_never_touched(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    fill(log, rounds=2, keys=3)
    append(log, [("k0", "active")])  # in the active segment
    cleaner_for(log, clock).clean_once()
    assert latest_view(log)["k0"] == "active"
    assert len(contents(log)) == 4


def test_tombstones_stay_until_delete_retention_after_their_cleaning_then_go(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock, delete_retention_ms=60_000)
    fill(log, rounds=2, keys=3)
    append(log, [("k1", None)])
    log.local_log.roll()
    cleaner = cleaner_for(log, clock)
    cleaner.clean_once()
    assert latest_view(log) == {"k0": "v1-0", "k1": None, "k2": "v1-2"}
    clock.advance(61_000)
    append(log, [("k9", "new")])
    log.local_log.roll()
    cleaner.clean_once()
    assert latest_view(log) == {"k0": "v1-0", "k2": "v1-2", "k9": "new"}


def test_a_range_with_more_keys_than_the_map_is_cleaned_in_several_passes(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    latest = {}
    for r in range(6):
        pairs = [(f"k{r}-{k}", "a") for k in range(30)] + [(f"k{r}-{k}", "b") for k in range(30)]
        append(log, pairs)
        latest.update(pairs)
        log.local_log.roll()
    cleaner = cleaner_for(log, clock, buffer=24 * 100)  # 90 keys: three segments' worth
    first = cleaner.clean_once()
    assert first is not None and first.plan.dirty_end == 180
    second = cleaner.clean_once()
    assert second is not None and second.plan.dirty_end == 360
    assert cleaner.clean_once() is None
    assert latest_view(log) == latest
    assert len(contents(log)) == 180


def test_a_segment_with_more_keys_than_the_map_holds_is_reported(log_dir: Path, clock: FakeClock, caplog):
    log = open_log(log_dir, clock)
    fill(log, rounds=2, keys=50)
    assert cleaner_for(log, clock, buffer=24 * 10).clean_once() is None
    assert "raise log.cleaner.dedupe.buffer.size" in caplog.text


def test_the_cleaner_checkpoint_records_how_far_the_log_is_clean(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    fill(log, rounds=3, keys=2)
    cleaner_for(log, clock).clean_once()
    saved = OffsetCheckpointFile(log_dir.parent / CLEANER_OFFSET_CHECKPOINT).read()
    assert saved == {TP: 6}
    assert cleaner_for(log, clock).clean_once() is None  # nothing dirty since


def test_a_cleaned_log_reopens_with_the_same_records_and_working_indexes(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock, index_interval_bytes=1)
    fill(log, rounds=4, keys=6)
    cleaner_for(log, clock).clean_once()
    before = contents(log)
    log.close()
    reopened = open_log(log_dir, clock, index_interval_bytes=1)
    assert contents(reopened) == before
    for offset, key, value in before:
        batch = next(iter_batches(reopened.read(offset, 1).read_bytes(), check_crc=True))
        assert batch.base_offset <= offset <= batch.last_offset


def test_only_rolled_segments_below_the_high_watermark_are_cleaned(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    fill(log, rounds=3, keys=2)
    cleaner = cleaner_for(log, clock, high_watermark=3)  # inside the second segment
    result = cleaner.clean_once()
    assert result is not None and result.plan.dirty_end == 2


def test_a_plan_made_elsewhere_is_applied_or_refused_when_stale(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    fill(log, rounds=3, keys=2)  # batches 0..1, 2..3, 4..5, a segment each
    cleaner = cleaner_for(log, clock)
    with pytest.raises(StalePlanError, match="inside the batch of offsets 2..3"):
        cleaner.apply_plan(CleanPlan.from_mapping(TP, 0, 3, {b"k0": 2, b"k1": 1}, origin="spark"))
    result = cleaner.apply_plan(CleanPlan.from_mapping(TP, 0, 4, {b"k0": 2, b"k1": 3}, origin="spark"))
    assert (result.stats.records_read, result.stats.records_kept, result.clean_end) == (4, 2, 4)
    assert [offset for offset, _, _ in contents(log)] == [2, 3, 4, 5]


def test_a_plan_ending_inside_a_segment_leaves_the_batches_from_its_end_as_they_were(
    log_dir: Path, clock: FakeClock
):
    # A follower's segments end elsewhere than the leader's: the leader's plan ends inside one of them.
    log = open_log(log_dir, clock)
    append(log, [("a", "1"), ("b", "1")])
    append(log, [("a", "2"), ("b", None)])
    append(log, [("a", "3"), ("c", None)])  # past the plan: a tombstone that must not be stamped yet
    log.local_log.roll()
    append(log, [("d", "1")])
    past_the_plan = log.read(4, 1 << 20).read_bytes()

    result = cleaner_for(log, clock).apply_plan(CleanPlan.from_mapping(TP, 0, 4, {b"a": 2, b"b": 3}, origin="spark"))

    assert result.clean_end == 4
    assert contents(log) == [(2, "a", "2"), (3, "b", None), (4, "a", "3"), (5, "c", None), (6, "d", "1")]
    assert log.read(4, 1 << 20).read_bytes() == past_the_plan
    assert OffsetCheckpointFile(log_dir.parent / CLEANER_OFFSET_CHECKPOINT).read() == {TP: 4}


def test_a_plan_reaching_into_the_active_segment_cleans_the_rolled_segments_below_it(
    log_dir: Path, clock: FakeClock
):
    # A follower that rolled earlier than the leader: the plan's end lies in its active segment.
    log = open_log(log_dir, clock)
    fill(log, rounds=2, keys=2)  # 0..1 and 2..3 rolled
    append(log, [("k0", "late"), ("k1", "late")])  # 4..5 in the active segment
    result = cleaner_for(log, clock).apply_plan(
        CleanPlan.from_mapping(TP, 0, 6, {b"k0": 4, b"k1": 5}, origin="spark")
    )
    assert result.clean_end == 4
    assert [offset for offset, _, _ in contents(log)] == [4, 5]


def test_the_cleaner_threads_clean_in_the_background_and_stop_promptly(log_dir: Path, clock: FakeClock):
    import threading
    import time

    log = open_log(log_dir, clock)
    latest = fill(log, rounds=3, keys=4)
    owner = threading.Lock()  # stands for the event loop: one caller at a time

    def run_on_owner(fn):  # type: ignore[no-untyped-def]
        with owner:
            return fn()

    cleaner = cleaner_for(log, clock)
    cleaner._run_on_owner = run_on_owner
    cleaner.start()
    try:
        deadline = time.monotonic() + 10
        while cleaner.passes == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert cleaner.passes == 1
    finally:
        started = time.monotonic()
        cleaner.shutdown()
        assert time.monotonic() - started < 5
    with owner:
        assert latest_view(log) == latest and len(contents(log)) == 4


def test_a_segment_whose_records_all_went_stays_as_an_empty_segment_and_reads_skip_it(
    log_dir: Path, clock: FakeClock
):
    log = open_log(log_dir, clock, segment_bytes=200)  # two one-batch segments a group
    latest = fill(log, rounds=3, keys=2)
    cleaner_for(log, clock).clean_once()
    # The first two segments became one empty segment; the third kept its batch; the active one is empty.
    assert [(s.base_offset, s.size > 0) for s in log.local_log.segments] == [(0, False), (4, True), (6, False)]
    assert contents(log, start=0) == [(4, "k0", "v2-0"), (5, "k1", "v2-1")]
    log.close()
    reopened = open_log(log_dir, clock, segment_bytes=200)
    assert latest_view(reopened) == latest and reopened.log_end_offset == 6
