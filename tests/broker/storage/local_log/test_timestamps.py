"""Finding offsets by timestamp (ListOffsets) through the time index."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from broker_core.storage.local_log import LocalLog
from broker_core.storage.time_index import TimestampOffset
from tests.broker.storage.batch_factory import FakeClock, make_batch, small_config


def log_with_timestamps(directory: Path, timestamps: list[int], **config: object) -> LocalLog:
    log = LocalLog.open(directory, small_config(**config), clock=FakeClock())
    for ts in timestamps:
        log.append(make_batch(records=2, max_timestamp=ts, payload_size=40))
    return log


def expected_answer(timestamps: list[int], target: int, log_start: int = 0) -> TimestampOffset | None:
    for i, ts in enumerate(timestamps):
        if ts >= target and 2 * i + 1 >= log_start:
            return TimestampOffset(ts, max(2 * i, log_start))
    return None


def test_exact_timestamp_finds_its_batch(tmp_path: Path):
    log = log_with_timestamps(tmp_path / "t-0", [100, 200, 300, 400])
    assert log.offset_for_timestamp(300) == TimestampOffset(300, 4)


def test_timestamp_between_batches_finds_the_next_batch(tmp_path: Path):
    log = log_with_timestamps(tmp_path / "t-0", [100, 200, 300, 400])
    assert log.offset_for_timestamp(250) == TimestampOffset(300, 4)


def test_timestamp_before_everything_finds_the_first_batch(tmp_path: Path):
    log = log_with_timestamps(tmp_path / "t-0", [100, 200])
    assert log.offset_for_timestamp(0) == TimestampOffset(100, 0)


def test_timestamp_after_everything_finds_nothing(tmp_path: Path):
    log = log_with_timestamps(tmp_path / "t-0", [100, 200])
    assert log.offset_for_timestamp(201) is None


def test_out_of_order_timestamps_answer_the_first_batch_at_or_above(tmp_path: Path):
    timestamps = [100, 500, 200, 300, 600, 250]
    log = log_with_timestamps(tmp_path / "t-0", timestamps, index_interval_bytes=0)
    for target in (150, 250, 400, 550):
        assert log.offset_for_timestamp(target) == expected_answer(timestamps, target)


def test_lookup_never_answers_below_the_log_start_offset(tmp_path: Path):
    log = log_with_timestamps(tmp_path / "t-0", [100, 200, 300, 400, 500] * 6)
    log.delete_records_before(13)
    # Offset 13 is the second half of batch 6 (offsets 12-13, timestamp 200).
    assert log.offset_for_timestamp(100) == TimestampOffset(200, 13)


def test_max_timestamp_and_offset_reports_the_largest_timestamp(tmp_path: Path):
    log = log_with_timestamps(tmp_path / "t-0", [100, 900, 300] * 10)
    assert log.max_timestamp_and_offset() == TimestampOffset(900, 2)


@settings(max_examples=80, deadline=None)
@given(
    timestamps=st.lists(st.integers(0, 1_000), min_size=1, max_size=60),
    target=st.integers(-5, 1_005),
    interval=st.sampled_from([0, 100, 4096]),
)
def test_lookup_matches_a_linear_scan_of_batch_timestamps(tmp_path_factory, timestamps, target, interval):
    log = log_with_timestamps(tmp_path_factory.mktemp("ts") / "t-0", timestamps, index_interval_bytes=interval)
    try:
        assert log.offset_for_timestamp(target) == expected_answer(timestamps, target)
    finally:
        log.close()
