"""Appending to a local log: validation, offset assignment, stamping (local_log.py, log_validator.py)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from broker_core.storage.config import LogConfig
from broker_core.storage.errors import (
    AppendTooLargeError,
    InvalidAppendError,
    RecordTooLargeError,
)
from broker_core.storage.local_log import LocalLog
from spate.records.batch import TIMESTAMP_TYPE_MASK, validate_batch
from spate.records.errors import CorruptRecordError
from tests.broker.storage.batch_factory import (
    FakeClock,
    make_batch,
    read_all,
    read_batch,
    small_config,
)


def open_log(log_dir: Path, clock: FakeClock, **config: object) -> LocalLog:
    return LocalLog.open(log_dir, small_config(**config), clock=clock)


def test_offsets_are_assigned_consecutively_from_the_log_end(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    first = log.append(make_batch(base_offset=999, records=3))
    second = log.append(make_batch(base_offset=0, records=2) + make_batch(base_offset=0, records=1))
    assert (first.first_offset, first.last_offset) == (0, 2)
    assert (second.first_offset, second.last_offset, second.batch_count) == (3, 5, 2)
    assert [h.base_offset for h in second.batches] == [3, 5]
    assert log.log_end_offset == 6


def test_stamped_offset_and_leader_epoch_keep_the_crc_valid(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    log.append(make_batch(records=1))
    log.append(make_batch(records=2, leader_epoch=-1), leader_epoch=7)
    stored = read_batch(log, 1)
    header = validate_batch(stored, check_crc=True)
    assert (header.base_offset, header.partition_leader_epoch) == (1, 7)


def test_append_info_describes_what_was_written(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    data = make_batch(records=2, max_timestamp=500) + make_batch(records=1, max_timestamp=900) + make_batch(max_timestamp=700)
    info = log.append(data)
    assert info.first_offset == 0 and info.last_offset == 3
    assert info.max_timestamp == 900 and info.offset_of_max_timestamp == 2
    assert info.batch_count == 3 and info.size_in_bytes == len(data)
    assert info.log_append_time == -1
    assert [h.position for h in info.batches] == [0, len(data) // 3, 2 * len(data) // 3]


def test_the_callers_buffer_is_not_modified(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    log.append(make_batch())
    data = bytearray(make_batch(base_offset=0))
    original = bytes(data)
    log.append(data)
    assert data == original


def test_log_append_time_stamps_the_broker_clock_and_a_valid_crc(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock, message_timestamp_type="LogAppendTime")
    info = log.append(make_batch(records=2, max_timestamp=5))
    assert info.log_append_time == clock.now
    assert info.max_timestamp == clock.now
    header = validate_batch(read_batch(log, 0), check_crc=True)
    assert header.max_timestamp == clock.now
    assert header.attributes & TIMESTAMP_TYPE_MASK


def test_a_batch_failing_its_crc_rejects_the_whole_append(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    good = make_batch()
    bad = bytearray(make_batch())
    bad[-1] ^= 0xFF
    with pytest.raises(CorruptRecordError, match="CRC"):
        log.append(good + bytes(bad))
    assert log.log_end_offset == 0 and log.size_in_bytes == 0


def test_trailing_bytes_after_the_last_batch_are_corrupt(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    with pytest.raises(CorruptRecordError):
        log.append(make_batch() + b"\x00\x01")
    assert log.log_end_offset == 0


def test_an_empty_append_is_invalid(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    with pytest.raises(InvalidAppendError):
        log.append(b"")


def test_a_batch_larger_than_max_message_bytes_is_too_large(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock, max_message_bytes=200)
    log.append(make_batch(payload_size=200 - 61))
    with pytest.raises(RecordTooLargeError) as caught:
        log.append(make_batch(payload_size=200 - 60))
    assert caught.value.batch_size == 201 and caught.value.error_code == 10


def test_an_append_larger_than_a_segment_is_rejected(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock, segment_bytes=500)
    with pytest.raises(AppendTooLargeError):
        log.append(make_batch(payload_size=300) + make_batch(payload_size=300))


@pytest.mark.parametrize("records, delta", [(0, 0), (2, 4), (3, 1)])
def test_produced_batches_must_be_dense_and_non_empty(log_dir: Path, clock: FakeClock, records: int, delta: int):
    log = open_log(log_dir, clock)
    with pytest.raises((InvalidAppendError, CorruptRecordError)):
        log.append(make_batch(records=records, last_offset_delta=delta))
    assert log.log_end_offset == 0


def test_replicated_batches_keep_their_offsets_and_may_leave_gaps(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    data = make_batch(base_offset=0, records=2, leader_epoch=3) + make_batch(base_offset=10, records=1, leader_epoch=3)
    info = log.append(data, assign_offsets=False)
    assert (info.first_offset, info.last_offset) == (0, 10)
    assert log.log_end_offset == 11
    assert read_all(log) == data
    assert log.read(5, 1000).first_offset == 10


def test_replicated_batches_below_the_log_end_are_rejected(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    log.append(make_batch(base_offset=0, records=5), assign_offsets=False)
    with pytest.raises(InvalidAppendError, match="below the expected"):
        log.append(make_batch(base_offset=4), assign_offsets=False)
    with pytest.raises(InvalidAppendError):
        log.append(make_batch(base_offset=6, records=2) + make_batch(base_offset=7), assign_offsets=False)
    assert log.log_end_offset == 5


def test_replicated_batches_far_beyond_a_segment_s_offset_range_roll_a_new_segment(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    log.append(make_batch(base_offset=0), assign_offsets=False)
    far = 5_000_000_000
    log.append(make_batch(base_offset=far), assign_offsets=False)
    assert [s.base_offset for s in log.segments] == [0, far]
    assert log.read(far, 1000).first_offset == far


def test_appends_on_a_closed_log_fail_with_a_typed_error(log_dir: Path, clock: FakeClock):
    from broker_core.storage.errors import LogClosedError

    log = open_log(log_dir, clock)
    log.close()
    with pytest.raises(LogClosedError):
        log.append(make_batch())


def test_a_partition_dir_path_that_is_a_file_is_a_log_dir_error(tmp_path: Path, clock: FakeClock):
    from broker_core.storage.errors import LogDirError

    path = tmp_path / "orders-0"
    path.write_text("not a dir")
    with pytest.raises(LogDirError, match="not a directory"):
        LocalLog.open(path, LogConfig(), clock=clock)


def test_batch_header_bytes_are_stored_big_endian_as_on_the_wire(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    log.append(make_batch(records=4))
    log.append(make_batch())
    raw = (log_dir / "00000000000000000000.log").read_bytes()
    second = raw[len(make_batch(records=4)) :]
    assert struct.unpack_from(">q", second, 0)[0] == 4


def test_a_smaller_segment_index_bytes_takes_effect_on_the_active_segment(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock, segment_bytes=100_000, index_interval_bytes=0)
    for _ in range(4):
        log.append(make_batch())
    log.update_config(small_config(segment_bytes=100_000, index_interval_bytes=0, segment_index_bytes=24))
    for _ in range(6):
        log.append(make_batch())
    assert len(log.segments) > 1
    assert log.log_end_offset == 10


def test_delete_removes_the_whole_partition_directory(log_dir: Path, clock: FakeClock):
    log = open_log(log_dir, clock)
    log.append(make_batch())
    log.delete()
    assert not log_dir.exists()
    assert log.is_closed
