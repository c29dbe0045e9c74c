"""A partition's producer state: completing appends, transactions, expiry, snapshots,
truncation and replay (producer_state/manager.py)."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_core.storage.producer_state import (
    BatchMetadata,
    CompletedTxn,
    DuplicateBatch,
    EndTxnMarker,
    ProducerAppendInfo,
    snapshot_path,
)
from spate.records.batch import (
    NO_SEQUENCE,
)
from spate.records.control import ControlType
from tests.broker.storage.producer_state.harness import (
    ABORT,
    COMMIT,
    EXPIRATION_MS,
    NOW,
    Clients,
    Harness,
    batch,
    populate,
    steps,
)

# -- completing appends ------------------------------------------------------


def test_complete_append_records_offsets_timestamp_and_end_offset(h):
    h.clock.now = 1234
    h.append(seq=0, count=4)
    entry = h.state.last_entry(1)
    assert entry.batches == (BatchMetadata(first_seq=0, last_seq=3, first_offset=0, last_offset=3, timestamp=1234),)
    assert entry.last_timestamp == 1234
    assert h.state.map_end_offset == 4


def test_complete_append_refuses_offsets_that_do_not_span_the_batch(h):
    info = h.state.prepare_append(batch(seq=0, count=3))
    with pytest.raises(ValueError, match="lastOffsetDelta"):
        h.state.complete_append(info, 10, 11, NOW)


def test_complete_append_refuses_a_batch_already_reflected_in_state(h):
    h.append(seq=0, count=5)
    info = h.state.prepare_append(batch(seq=5))
    with pytest.raises(ValueError, match="already reflected"):
        h.state.complete_append(info, 3, 3, NOW)


# -- transactions ------------------------------------------------------------


def test_first_transactional_batch_opens_a_transaction_at_its_offset(h):
    h.append(pid=1, seq=0)
    h.append(pid=2, seq=0, transactional=True)
    h.append(pid=2, seq=1, transactional=True)
    assert h.state.last_entry(2).current_txn_first_offset == 1
    assert h.state.first_unstable_offset() == 1


def test_first_unstable_offset_is_the_oldest_open_transaction(h):
    h.append(pid=1, seq=0, transactional=True)
    h.append(pid=2, seq=0, transactional=True)
    h.append(pid=1, control=True, seq=NO_SEQUENCE)
    assert h.state.first_unstable_offset() == 1
    h.append(pid=2, control=True, seq=NO_SEQUENCE)
    assert h.state.first_unstable_offset() is None


def test_no_transaction_is_open_without_transactional_batches(h):
    h.append(seq=0)
    assert h.state.first_unstable_offset() is None


def test_abort_marker_reports_the_transaction_it_closed(h):
    h.append(pid=1, seq=0)
    h.append(pid=1, seq=1, count=3, transactional=True)
    h.append(pid=1, seq=4, transactional=True)
    h.append(pid=1, control=True, seq=NO_SEQUENCE, marker=ABORT)
    assert h.completed == CompletedTxn(producer_id=1, first_offset=1, last_offset=5, is_aborted=True)


def test_commit_marker_reports_a_committed_transaction(h):
    h.append(seq=0, transactional=True)
    h.append(control=True, seq=NO_SEQUENCE, marker=COMMIT)
    assert h.completed == CompletedTxn(producer_id=1, first_offset=0, last_offset=1, is_aborted=False)


def test_marker_without_an_open_transaction_completes_nothing(h):
    h.append(seq=0)
    h.append(control=True, seq=NO_SEQUENCE, marker=ABORT)
    assert h.completed is None
    h.append(pid=9, control=True, seq=NO_SEQUENCE, marker=ABORT)
    assert h.completed is None
    assert h.state.last_entry(9).producer_epoch == 0


def test_data_batches_complete_nothing(h):
    h.append(seq=0, transactional=True)
    assert h.completed is None


def test_replay_reports_each_transaction_a_marker_closes(h):
    h.append(pid=1, seq=0, transactional=True)
    h.append(pid=2, seq=0, transactional=True)
    h.append(pid=1, control=True, seq=NO_SEQUENCE, marker=ABORT)
    h.append(pid=2, control=True, seq=NO_SEQUENCE, marker=COMMIT)
    h.append(pid=3, control=True, seq=NO_SEQUENCE, marker=ABORT)
    restored = h.reopen()
    restored.load(0, h.log_end)
    seen: list[CompletedTxn] = []
    restored.rebuild_from(h.log, on_completed=seen.append)
    assert seen == [CompletedTxn(1, 0, 2, True), CompletedTxn(2, 1, 3, False)]


def test_forget_state_drops_producers_but_keeps_snapshots(h):
    h.append(seq=0)
    h.state.take_snapshot(1)
    h.state.forget_state(0)
    assert h.state.active_producers() == {}
    assert h.state.map_end_offset == 0
    assert h.state.snapshot_offsets() == [1]


# -- expiration --------------------------------------------------------------


def test_idle_producers_expire_but_open_transactions_keep_theirs(h):
    h.append(pid=1, seq=0)
    h.append(pid=2, seq=0, transactional=True)
    h.clock.now = NOW + EXPIRATION_MS - 1
    h.append(pid=3, seq=0)
    h.state.remove_expired_producers(NOW + EXPIRATION_MS)
    assert sorted(h.state.active_producers()) == [2, 3]


def test_expired_producer_may_resume_at_any_sequence(h):
    h.append(seq=0)
    h.state.remove_expired_producers(NOW + EXPIRATION_MS)
    assert isinstance(h.append(seq=41), ProducerAppendInfo)


# -- snapshots ---------------------------------------------------------------


def test_coordinator_epoch_of_the_last_marker_survives_a_snapshot(h):
    h.append(control=True, seq=NO_SEQUENCE, marker=EndTxnMarker(ControlType.COMMIT, 7))
    h.state.take_snapshot(h.log_end)
    restored = h.reopen()
    restored.load(0, h.log_end)
    assert restored.last_entry(1).coordinator_epoch == 7


def test_snapshot_round_trip_restores_every_producer(h):
    populate(h)
    path = h.state.take_snapshot(h.log_end)
    assert path == snapshot_path(h.dir, h.log_end) == h.dir / f"{h.log_end:020d}.snapshot"
    restored = h.reopen()
    assert restored.load(0, h.log_end) == h.log_end
    assert dict(restored.active_producers()) == dict(h.state.active_producers())
    assert restored.map_end_offset == h.log_end
    assert restored.first_unstable_offset() == 7


def test_restored_state_still_recognises_retries(h):
    for i in range(3):
        h.append(seq=i)
    h.state.take_snapshot(h.log_end)
    restored = h.reopen()
    restored.load(0, h.log_end)
    assert isinstance(restored.prepare_append(batch(seq=1)), DuplicateBatch)


def test_a_snapshot_at_an_offset_already_snapshotted_is_not_rewritten(h):
    h.append(seq=0)
    path = h.state.take_snapshot(h.log_end)
    inode = path.stat().st_ino
    assert h.state.take_snapshot(h.log_end) == path
    assert path.stat().st_ino == inode  # a rewrite renames a new file over it


def test_an_empty_log_without_producers_gets_no_snapshot(h):
    h.state.take_snapshot(0)
    assert h.state.snapshot_offsets() == []
    assert h.reopen().load(0, 0) == 0


def test_only_the_two_newest_snapshots_are_kept(h):
    for i in range(4):
        h.append(seq=i)
        h.state.take_snapshot(h.log_end)
    assert h.state.snapshot_offsets() == [3, 4]


def test_corrupt_newest_snapshot_falls_back_to_the_older_one(h, caplog):
    h.append(seq=0)
    h.state.take_snapshot(1)
    h.append(seq=1)
    newest = h.state.take_snapshot(2)
    data = bytearray(newest.read_bytes())
    data[-1] ^= 0xFF
    newest.write_bytes(bytes(data))
    restored = h.reopen()
    with caplog.at_level(logging.WARNING):
        assert restored.load(0, 2) == 1
    assert str(newest) in caplog.text
    assert restored.last_entry(1).last_seq == 0
    assert restored.snapshot_offsets() == [1]


def test_torn_snapshot_falls_back_to_replaying_from_log_start(h):
    h.append(seq=0)
    path = h.state.take_snapshot(1)
    path.write_bytes(path.read_bytes()[:7])
    restored = h.reopen()
    assert restored.load(0, 1) == 0
    assert restored.active_producers() == {}


def test_snapshots_beyond_the_log_end_are_ignored_and_deleted(h):
    h.append(seq=0)
    h.state.take_snapshot(1)
    h.append(seq=1)
    h.state.take_snapshot(2)
    restored = h.reopen()
    assert restored.load(0, 1) == 1
    assert restored.snapshot_offsets() == [1]


def test_snapshots_below_the_log_start_are_ignored_and_deleted(h):
    h.append(seq=0)
    h.state.take_snapshot(1)
    restored = h.reopen()
    assert restored.load(5, 9) == 5
    assert restored.snapshot_offsets() == []
    assert restored.map_end_offset == 5


def test_load_drops_producers_expired_while_the_broker_was_down(h):
    h.append(pid=1, seq=0)
    h.append(pid=2, seq=0, transactional=True)
    h.state.take_snapshot(h.log_end)
    h.clock.now = NOW + EXPIRATION_MS
    restored = h.reopen()
    restored.load(0, h.log_end)
    assert list(restored.active_producers()) == [2]


def test_load_removes_a_temp_file_left_by_a_crash(h):
    (h.dir / f"{5:020d}.snapshot.tmp").write_bytes(b"partial")
    h.state.load(0, 0)
    assert list(h.dir.iterdir()) == []


def test_snapshot_below_the_state_end_offset_is_refused(h):
    h.append(seq=0, count=3)
    with pytest.raises(ValueError):
        h.state.take_snapshot(2)


# -- truncation --------------------------------------------------------------


def test_truncate_and_reload_rewinds_to_the_newest_snapshot_at_or_below_the_new_end(h):
    for i in range(3):
        h.append(seq=i)
        h.state.take_snapshot(h.log_end)  # snapshots at 2 and 3 survive
    h.append(seq=3)
    replay_from = h.state.truncate_and_reload(0, 2)
    assert replay_from == 2
    assert h.state.snapshot_offsets() == [2]
    assert h.state.last_entry(1).last_seq == 1
    assert isinstance(h.state.prepare_append(batch(seq=2, offset=2)), ProducerAppendInfo)


def test_truncate_and_reload_keeps_state_that_already_ends_at_the_log_end(h):
    h.append(seq=0)
    h.append(seq=1)
    assert h.state.truncate_and_reload(1, 2) == 2
    assert h.state.last_entry(1).last_seq == 1


def test_truncate_and_reload_then_replay_rebuilds_the_truncated_state(h):
    for i in range(6):
        h.append(seq=i)
        if i == 1:
            h.state.take_snapshot(h.log_end)
    replay_from = h.state.truncate_and_reload(0, 4)
    h.state.rebuild_from(x for x in h.log if replay_from <= x[0].base_offset < 4)
    assert h.state.last_entry(1).last_seq == 3
    assert h.state.map_end_offset == 4


def test_truncate_fully_forgets_producers_and_snapshots(h):
    h.append(seq=0)
    h.state.take_snapshot(1)
    h.state.truncate_fully_and_start_at(100)
    assert h.state.active_producers() == {}
    assert h.state.snapshot_offsets() == []
    assert h.state.map_end_offset == 100
    h.log_end = 100
    assert isinstance(h.append(seq=5), ProducerAppendInfo)


def test_rebuild_skips_batches_already_in_the_snapshot_and_advances_past_others(h):
    h.append(seq=0)
    h.state.take_snapshot(1)
    h.append(seq=1)
    no_pid = batch(pid=-1, epoch=-1, seq=NO_SEQUENCE, offset=2, count=3)
    restored = h.reopen()
    restored.load(0, 5)
    restored.rebuild_from(h.log + [(no_pid, None)])
    assert restored.last_entry(1).last_seq == 1
    assert restored.map_end_offset == 5


# -- properties --------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(plan=steps, cut=st.integers(0, 40))
def test_snapshot_plus_replay_rebuilds_exactly_the_live_state(tmp_path_factory, plan, cut):
    h = Harness(tmp_path_factory.mktemp("p"))
    clients = Clients()
    clients.run(h, plan[:cut])
    h.state.take_snapshot(h.log_end)
    clients.run(h, plan[cut:])
    restored = h.reopen()
    replay_from = restored.load(0, h.log_end)
    restored.rebuild_from(h.log)
    assert replay_from <= h.log_end
    assert dict(restored.active_producers()) == dict(h.state.active_producers())
    assert restored.first_unstable_offset() == h.state.first_unstable_offset()
    assert restored.map_end_offset == h.log_end
