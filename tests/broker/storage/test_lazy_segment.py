"""A segment of a log opened after a clean shutdown reads its files on first use (``lazy_segment``).

Each use (reads, timestamps, appends and rolls) opens what it needs; an index
that does not fit the log is rebuilt then; a segment nobody used is closed
without touching its files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.storage.local_log import LocalLog
from tests.broker.storage.batch_factory import FakeClock, append_batches, make_batch, read_all, small_config
from tests.broker.storage.loader.test_clean_open import SEGMENT_SUFFIXES, cleanly_closed_log, files_opened, reopen_clean


def test_a_lazily_opened_log_serves_reads_timestamps_and_appends(log_dir: Path, clock: FakeClock):
    stored, end = cleanly_closed_log(log_dir, clock)
    log = reopen_clean(log_dir, clock, end)
    assert read_all(log) == b"".join(stored)
    for i, data in enumerate(stored):
        assert log.read(2 * i + 1, 1).read_bytes() == data
    assert log.offset_for_timestamp(clock.now + 17).offset == 34
    assert log.max_timestamp_and_offset().timestamp == clock.now + 39
    assert [s.next_offset for s in log.segments][-1] == end

    more = append_batches(log, 12, records=2, clock=FakeClock(clock.now + 100))
    assert log.log_end_offset == end + 24
    assert read_all(log) == b"".join(stored + more)
    assert log.max_timestamp_and_offset().timestamp == clock.now + 111
    log.flush()
    log.close()

    again = reopen_clean(log_dir, clock, log.recovery_point)
    assert read_all(again) == b"".join(stored + more)
    assert again.offset_for_timestamp(clock.now + 105).offset == end + 10


def test_a_lazily_opened_active_segment_rolls_by_the_age_of_its_first_batch(log_dir: Path, clock: FakeClock):
    config = small_config(segment_ms=60_000)
    log = LocalLog.open(log_dir, config, clock=clock)
    log.append(make_batch(max_timestamp=clock.now))
    log.flush()
    log.close()
    clock.advance(61_000)
    reopened = LocalLog.open(
        log_dir, config, clock=clock, recovery_point=log.recovery_point, had_clean_shutdown=True
    )
    reopened.append(make_batch(max_timestamp=clock.now))
    assert reopened.number_of_segments == 2


def test_an_index_that_does_not_fit_is_rebuilt_on_first_use(log_dir: Path, clock: FakeClock):
    stored, end = cleanly_closed_log(log_dir, clock)
    first_index = sorted(log_dir.glob("*.index"))[0]
    first_index.write_bytes(bytes.fromhex("00000009000001f4" "0000000300000320"))  # offsets go back
    log = reopen_clean(log_dir, clock, end)
    assert read_all(log) == b"".join(stored)
    assert log.read(3, 1).read_bytes() == stored[1]


def test_a_lazily_opened_log_nobody_used_closes_without_touching_its_segment_files(
    log_dir: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
):
    _, end = cleanly_closed_log(log_dir, clock)
    before = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in log_dir.iterdir()}
    log = reopen_clean(log_dir, clock, end)
    with files_opened(monkeypatch) as opened:
        log.flush()
        log.close()
    assert [name for name in opened if name.endswith(SEGMENT_SUFFIXES)] == []
    assert {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in log_dir.iterdir()} == before
