"""After a crash, a partition restores producer state and epochs from what recovery kept of the batches
it validated, without reading the log again; the result is the one a replay from the log gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.storage import recovered_batches
from broker_core.storage.config import LogConfig
from broker_core.storage.local_log import LocalLog
from broker_core.storage.unified_log import UnifiedLog
from spate.records import Record, build_batch
from tests.broker.storage.batch_factory import FakeClock

EXPIRATION_MS = 86_400_000


def batch(pid: int = -1, seq: int = -1, *, transactional: bool = False) -> bytes:
    records = [Record(offset=0, timestamp=1_000, key=None, value=b"v")]
    if pid < 0:
        return build_batch(records)
    return build_batch(records, producer_id=pid, producer_epoch=0, base_sequence=seq, is_transactional=transactional)


def crashed_log(log_dir: Path, clock: FakeClock) -> int:
    """A log flushed up to a point, then written on in a new leader epoch with transactions; its recovery point."""
    log = UnifiedLog(LocalLog.open(log_dir, LogConfig(segment_bytes=600), clock=clock),
                     clock=clock, producer_id_expiration_ms=EXPIRATION_MS)
    log.append_as_leader(batch(pid=7, seq=0), leader_epoch=1)
    log.append_as_leader(batch(), leader_epoch=1)
    log.checkpoint()
    recovery_point = log.local_log.recovery_point
    for seq in range(1, 8):
        log.append_as_leader(batch(pid=7, seq=seq), leader_epoch=2)
    log.append_as_leader(batch(pid=9, seq=0, transactional=True), leader_epoch=3)
    log.append_txn_marker(producer_id=9, producer_epoch=0, coordinator_epoch=0, commit=False, leader_epoch=3)
    log.append_as_leader(batch(pid=9, seq=1, transactional=True), leader_epoch=3)
    assert log.local_log.number_of_segments > 1
    return recovery_point  # the process dies: nothing above the recovery point was flushed


def reopen(log_dir: Path, clock: FakeClock, recovery_point: int) -> UnifiedLog:
    local = LocalLog.open(log_dir, LogConfig(segment_bytes=600), clock=clock, recovery_point=recovery_point)
    return UnifiedLog(local, clock=clock, producer_id_expiration_ms=EXPIRATION_MS)


def state_of(log: UnifiedLog) -> tuple:
    producers = {pid: (e.last_seq, e.last_offset, e.current_txn_first_offset)
                 for pid, e in log.producer_state.active_producers().items()}
    epochs = [(e.epoch, e.start_offset) for e in log.epoch_cache.entries]
    return producers, epochs, log.collect_aborted_transactions(0, log.log_end_offset), log.first_unstable_offset()


def test_a_crashed_partition_opens_from_what_recovery_kept_without_reading_the_log(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
):
    replayed = tmp_path / "replayed-0"
    recovery_point = crashed_log(replayed, clock)
    kept = tmp_path / "kept-0"
    kept.mkdir()
    for path in replayed.iterdir():
        (kept / path.name).write_bytes(path.read_bytes())

    expected = state_of(reopen(replayed, clock, recovery_point))  # without what recovery kept: reads the log
    assert expected[1] == [(1, 0), (2, 2), (3, 9)]

    def no_reading(self, offset):
        raise AssertionError(f"read the log again from offset {offset}")

    monkeypatch.setattr(UnifiedLog, "_batches_from", no_reading)
    opened = reopen(kept, clock, recovery_point)
    assert state_of(opened) == expected
    assert opened.append_as_leader(batch(pid=7, seq=7), leader_epoch=3).duplicate


def test_a_log_with_too_many_producer_batches_is_replayed_from_the_log(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
):
    recovery_point = crashed_log(tmp_path / "orders-0", clock)
    monkeypatch.setattr(recovered_batches, "MAX_KEPT", 3)
    opened = reopen(tmp_path / "orders-0", clock, recovery_point)
    assert opened.producer_state.last_entry(7).last_seq == 7
    assert opened.append_as_leader(batch(pid=7, seq=7), leader_epoch=3).duplicate
