"""Segment files opened on use and closed when idle, within a broker-wide cap on descriptors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from broker_core.storage.local_log import LocalLog
from broker_core.storage.open_files import MIN_CAPACITY, OpenFileCache
from tests.broker.storage.batch_factory import FakeClock, append_batches, read_all, small_config


def open_descriptors_under(directory: Path) -> int:
    """Descriptors of this process that name a file under ``directory``."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith(str(directory)):
                count += 1
        except OSError:
            continue
    return count


def open_logs(root: Path, count: int, cache: OpenFileCache, clock: FakeClock) -> list[LocalLog]:
    config = small_config(segment_bytes=600, index_interval_bytes=100)
    return [LocalLog.open(root / f"t-{i}", config, clock=clock, open_files=cache) for i in range(count)]


class Holder:
    def __init__(self) -> None:
        self.closed = 0

    def close_idle(self) -> None:
        self.closed += 1


def test_the_cache_closes_the_least_recently_used_holders_past_its_capacity() -> None:
    cache = OpenFileCache(MIN_CAPACITY)
    holders = [Holder() for _ in range(MIN_CAPACITY + 2)]
    for holder in holders[:MIN_CAPACITY]:
        cache.touch(holder, 1)
    cache.refresh(holders[0])
    cache.touch(holders[-2], 1)
    cache.touch(holders[-1], 1)
    assert cache.open_descriptors == MIN_CAPACITY
    assert [h.closed for h in holders[:3]] == [0, 1, 1]
    assert holders[1] not in cache and holders[0] in cache


def test_a_cap_below_the_minimum_is_refused_naming_the_minimum() -> None:
    with pytest.raises(ValueError, match=str(MIN_CAPACITY)):
        OpenFileCache(MIN_CAPACITY - 1)


def test_a_segment_closed_by_the_cache_reopens_and_reads_the_same_bytes(tmp_path: Path) -> None:
    clock = FakeClock()
    cache = OpenFileCache(MIN_CAPACITY)
    logs = open_logs(tmp_path, 40, cache, clock)
    written = [b"".join(append_batches(log, 12, clock=clock)) for log in logs]
    assert cache.evictions > 0
    for log, data in zip(logs, written):
        assert read_all(log) == data
    for log in logs:
        log.close()


def test_the_cap_holds_across_many_logs_written_and_read(tmp_path: Path) -> None:
    clock = FakeClock()
    cache = OpenFileCache(32)
    logs = open_logs(tmp_path, 60, cache, clock)
    for log in logs:
        append_batches(log, 20, clock=clock)
        read_all(log)
        assert cache.open_descriptors <= 32
        assert open_descriptors_under(tmp_path) <= 32
    for log in logs:
        log.close()
    assert open_descriptors_under(tmp_path) == 0


def test_a_file_range_being_sent_stays_open_after_the_cache_closes_its_segment(tmp_path: Path) -> None:
    clock = FakeClock()
    cache = OpenFileCache(MIN_CAPACITY)
    first, *others = open_logs(tmp_path, 30, cache, clock)
    expected = b"".join(append_batches(first, 3, clock=clock))
    in_flight = first.read(0, 1 << 20)
    for log in others:
        append_batches(log, 3, clock=clock)
    # The log's own handles are closed; only the slice keeps its file open.
    assert open_descriptors_under(first.directory) == 1
    # The connection reopens the descriptor through /proc, as it does for sendfile.
    with open(f"/proc/self/fd/{in_flight.fileno()}", "rb", buffering=0) as source:
        assert os.pread(source.fileno(), in_flight.size, in_flight.position) == expected
    assert in_flight.read_bytes() == expected
    for log in [first, *others]:
        log.close()


def test_an_idle_partition_holds_no_descriptor_once_others_need_them(tmp_path: Path) -> None:
    clock = FakeClock()
    cache = OpenFileCache(MIN_CAPACITY)
    idle, *busy = open_logs(tmp_path, 20, cache, clock)
    append_batches(idle, 5, clock=clock)
    for log in busy:
        append_batches(log, 5, clock=clock)
    assert open_descriptors_under(idle.directory) == 0
    assert idle.read(0, 1).read_bytes()
    for log in [idle, *busy]:
        log.close()
