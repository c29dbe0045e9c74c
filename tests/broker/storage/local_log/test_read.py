"""Reading a log: segment lookup, whole-batch slices, limits and ranges."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from broker_core.storage.errors import OffsetOutOfRangeError
from broker_core.storage.local_log import LocalLog
from spate.records.batch import iter_batches
from tests.broker.storage.batch_factory import (
    FakeClock,
    append_batches,
    make_batch,
    read_all,
    small_config,
)


@pytest.fixture
def log(log_dir: Path, clock: FakeClock) -> LocalLog:
    log = LocalLog.open(log_dir, small_config(segment_bytes=1_000, index_interval_bytes=150), clock=clock)
    yield log
    log.close()


def test_reading_from_inside_a_batch_returns_that_whole_batch(log: LocalLog):
    stored = append_batches(log, 3, records=4)
    found = log.read(6, 10_000)
    assert found.first_offset == 4
    assert found.read_bytes() == b"".join(stored[1:3])


def test_consecutive_reads_walk_every_segment_and_return_exactly_what_was_stored(log: LocalLog):
    stored = append_batches(log, 40, records=3)
    assert len(log.segments) > 3
    assert read_all(log) == b"".join(stored)


def test_each_read_stays_within_one_segment(log: LocalLog):
    append_batches(log, 40)
    first_segment = log.segments[0]
    found = log.read(0, 1 << 20)
    assert found.size == first_segment.size
    assert found.next_offset == log.segments[1].base_offset


def test_reading_at_the_log_end_returns_an_empty_slice(log: LocalLog):
    append_batches(log, 2)
    found = log.read(log.log_end_offset, 1000)
    assert found.is_empty and found.read_bytes() == b""
    assert found.first_offset == log.log_end_offset


@pytest.mark.parametrize("offset", [-1, 5])
def test_reading_outside_the_log_is_out_of_range(log: LocalLog, offset: int):
    append_batches(log, 2)  # offsets 0..3
    with pytest.raises(OffsetOutOfRangeError) as caught:
        log.read(offset, 1000)
    assert (caught.value.log_start, caught.value.log_end) == (0, 4)
    assert caught.value.error_code == 1


def test_reading_below_the_log_start_offset_is_out_of_range(log: LocalLog):
    append_batches(log, 30)
    log.delete_records_before(20)
    with pytest.raises(OffsetOutOfRangeError):
        log.read(19, 1000)
    assert log.read(20, 1000).first_offset == 20


def test_max_bytes_limits_the_slice_to_whole_batches(log: LocalLog):
    stored = append_batches(log, 5)
    size = len(stored[0])
    found = log.read(0, 3 * size - 1)
    assert found.size == 2 * size
    assert [h.base_offset for h in iter_batches(found.read_bytes())] == [0, 2]


def test_one_batch_larger_than_max_bytes_is_returned_when_min_one_batch(log: LocalLog):
    stored = append_batches(log, 2)
    assert log.read(0, 1).read_bytes() == stored[0]
    assert log.read(0, 1, min_one_batch=False).is_empty


def test_max_offset_keeps_batches_at_or_above_the_high_watermark_out(log: LocalLog):
    append_batches(log, 5, records=2)  # batches 0-1, 2-3, 4-5, ...
    found = log.read(0, 10_000, max_offset=4)
    assert (found.first_offset, found.last_offset) == (0, 3)
    assert log.read(4, 10_000, max_offset=4).is_empty


def test_a_slice_can_be_sent_with_sendfile(log: LocalLog):
    stored = append_batches(log, 4)
    found = log.read(2, 10_000)
    left, right = socket.socketpair()
    with left, right:
        sent = left.sendfile(found.file, found.position, found.size)
        assert sent == found.size
        received = b""
        while len(received) < found.size:
            received += right.recv(65536)
    assert received == b"".join(stored[1:])
    assert os.fstat(found.fileno()).st_size >= found.position + found.size


def test_reads_continue_past_an_empty_segment_and_offset_gaps(log_dir: Path, clock: FakeClock):
    log = LocalLog.open(log_dir, small_config(), clock=clock)
    log.append(make_batch(base_offset=0, records=2), assign_offsets=False)
    log.roll()
    log.append(make_batch(base_offset=50, records=2), assign_offsets=False)
    log.roll()
    log.append(make_batch(base_offset=80), assign_offsets=False)
    assert log.read(2, 1000).first_offset == 50
    assert log.read(52, 1000).first_offset == 80
    log.close()


def test_a_slice_stays_valid_while_more_is_appended(log: LocalLog):
    stored = append_batches(log, 2)
    found = log.read(0, 10_000)
    append_batches(log, 3)
    assert found.read_bytes() == b"".join(stored)
