"""Missing or corrupt index files are rebuilt from the log; leftovers are settled."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from broker_core.storage.local_log import LocalLog
from broker_core.storage.offset_index import OffsetIndex
from tests.broker.storage.batch_factory import (
    FakeClock,
    append_batches,
    make_batch,
    read_all,
    small_config,
)

CONFIG = small_config(segment_bytes=1_500, index_interval_bytes=100)


def closed_log(log_dir: Path, clock: FakeClock, batches: int = 40) -> list[bytes]:
    log = LocalLog.open(log_dir, CONFIG, clock=clock)
    stored = append_batches(log, batches, records=2, clock=clock)
    log.close()
    return stored


def index_entries(path: Path, base: int) -> list[tuple[int, int]]:
    index = OffsetIndex(path, base, CONFIG.segment_index_bytes)
    entries = [(e.offset, e.position) for e in map(index.entry, range(index.entries))]
    index.release()
    return entries


def assert_every_offset_found(log: LocalLog, stored: list[bytes]) -> None:
    for i, data in enumerate(stored):
        assert log.read(2 * i + 1, 1).read_bytes() == data
    assert read_all(log) == b"".join(stored)


@pytest.mark.parametrize(
    "corrupt",
    [
        pytest.param(lambda p: p.unlink(), id="missing"),
        pytest.param(lambda p: p.write_bytes(p.read_bytes()[:-3]), id="size-not-a-multiple"),
        pytest.param(lambda p: p.write_bytes(struct.pack(">ii", 9, 500) + struct.pack(">ii", 3, 800)), id="not-increasing"),
        pytest.param(lambda p: p.write_bytes(struct.pack(">ii", 2, 10_000_000)), id="past-the-log"),
        pytest.param(lambda p: p.write_bytes(struct.pack(">ii", 3, 150)), id="points-mid-batch"),
        pytest.param(lambda p: p.write_bytes(b"\xff" * 64), id="garbage"),
    ],
)
def test_a_bad_offset_index_is_rebuilt_and_lookups_stay_correct(log_dir: Path, clock: FakeClock, corrupt):
    stored = closed_log(log_dir, clock)
    path = log_dir / "00000000000000000000.index"
    expected = index_entries(path, 0)
    corrupt(path)
    log = LocalLog.open(log_dir, CONFIG, clock=clock, had_clean_shutdown=True)
    assert_every_offset_found(log, stored)
    log.close()
    assert index_entries(path, 0) == expected


@pytest.mark.parametrize(
    "corrupt",
    [
        pytest.param(lambda p: p.unlink(), id="missing"),
        pytest.param(lambda p: p.write_bytes(p.read_bytes()[:-5]), id="size-not-a-multiple"),
        pytest.param(lambda p: p.write_bytes(struct.pack(">qi", 50, 0) + struct.pack(">qi", 40, 2)), id="not-increasing"),
        pytest.param(lambda p: p.write_bytes(struct.pack(">qi", 50, 9_999)), id="past-the-log"),
    ],
)
def test_a_bad_time_index_is_rebuilt_and_timestamp_lookups_stay_correct(log_dir: Path, clock: FakeClock, corrupt):
    closed_log(log_dir, clock)
    corrupt(log_dir / "00000000000000000000.timeindex")
    log = LocalLog.open(log_dir, CONFIG, clock=clock, had_clean_shutdown=True)
    for i in range(40):
        assert log.offset_for_timestamp(clock.now + i).offset == 2 * i
    assert log.segments[0].max_timestamp > 0


def test_a_clean_restart_trusts_the_log_without_a_crc_scan(log_dir: Path, clock: FakeClock):
    stored = closed_log(log_dir, clock)
    # Flip a CRC-covered byte: only a recovery scan would notice.
    path = log_dir / "00000000000000000000.log"
    raw = bytearray(path.read_bytes())
    raw[len(stored[0]) - 1] ^= 0x01
    path.write_bytes(bytes(raw))
    trusted = LocalLog.open(log_dir, CONFIG, clock=clock, had_clean_shutdown=True)
    assert trusted.log_end_offset == 80
    trusted.close()
    recovered = LocalLog.open(log_dir, CONFIG, clock=clock, recovery_point=0)
    assert recovered.log_end_offset == 0


def test_index_files_without_a_log_are_removed(log_dir: Path, clock: FakeClock):
    closed_log(log_dir, clock, batches=3)
    (log_dir / "00000000000000000500.index").write_bytes(b"")
    (log_dir / "00000000000000000500.timeindex").write_bytes(b"")
    LocalLog.open(log_dir, CONFIG, clock=clock, had_clean_shutdown=True).close()
    assert sorted(p.name for p in log_dir.iterdir()) == [
        "00000000000000000000.index",
        "00000000000000000000.log",
        "00000000000000000000.timeindex",
    ]


def test_cleaned_files_are_discarded_and_a_swap_replaces_the_segments_it_covers(log_dir: Path, clock: FakeClock):
    closed_log(log_dir, clock)  # segments at 0, 28, 56
    (log_dir / "00000000000000000000.log.cleaned").write_bytes(b"partial")
    compacted = make_batch(base_offset=3, records=1) + make_batch(base_offset=40, records=1)
    (log_dir / "00000000000000000000.log.swap").write_bytes(compacted)
    (log_dir / "00000000000000000000.index.swap").write_bytes(b"")
    log = LocalLog.open(log_dir, CONFIG, clock=clock, had_clean_shutdown=True)
    assert [s.base_offset for s in log.segments] == [0, 56]
    assert read_all(log, 0).startswith(compacted)
    assert log.read(10, 1).first_offset == 40
    assert not any(p.suffix in (".cleaned", ".swap") for p in log_dir.iterdir())


def test_a_log_start_offset_beyond_the_data_restarts_the_log_there(log_dir: Path, clock: FakeClock):
    closed_log(log_dir, clock, batches=3)
    log = LocalLog.open(log_dir, CONFIG, clock=clock, log_start_offset=100, had_clean_shutdown=True)
    assert (log.log_start_offset, log.log_end_offset) == (100, 100)
    assert log.append(make_batch()).first_offset == 100


def test_an_index_written_kafka_style_with_last_offsets_is_used_as_it_is(log_dir: Path, clock: FakeClock):
    stored = closed_log(log_dir, clock)
    path = log_dir / "00000000000000000000.index"
    kafka_style = [(offset + 1, position) for offset, position in index_entries(path, 0)]  # batches hold 2 offsets
    path.write_bytes(b"".join(struct.pack(">ii", offset, position) for offset, position in kafka_style))
    log = LocalLog.open(log_dir, CONFIG, clock=clock, had_clean_shutdown=True)
    assert_every_offset_found(log, stored)
    log.close()
    assert index_entries(path, 0) == kafka_style
