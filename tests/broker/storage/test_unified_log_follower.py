"""UnifiedLog as a follower: the leader's batches appended unchanged, truncation back to agreement."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.storage.errors import InvalidAppendError
from broker_core.storage.unified_log import UnifiedLog
from spate.records import iter_batches
from spate.records.errors import CorruptRecordError
from tests.broker.storage.batch_factory import FakeClock
from tests.broker.storage.test_unified_log import batch, corrupt, open_log


@pytest.fixture
def leader(tmp_path: Path, clock: FakeClock) -> UnifiedLog:
    return open_log(tmp_path / "leader", clock)


@pytest.fixture
def follower(tmp_path: Path, clock: FakeClock) -> UnifiedLog:
    return open_log(tmp_path / "follower", clock)


def fetch_all(log: UnifiedLog, start: int = 0) -> bytes:
    return log.read(start, 1 << 20).read_bytes()


def test_a_follower_keeps_the_leaders_offsets_epochs_and_bytes(leader: UnifiedLog, follower: UnifiedLog):
    leader.append_as_leader(batch(count=2), leader_epoch=1)
    leader.append_as_leader(batch(pid=7, seq=0, count=3), leader_epoch=4)
    follower.append_as_follower(fetch_all(leader))
    assert fetch_all(follower) == fetch_all(leader)
    assert follower.log_end_offset == 5
    assert [(e.epoch, e.start_offset) for e in follower.epoch_cache.entries] == [(1, 0), (4, 2)]
    assert follower.producer_state.last_entry(7).last_offset == 4


def test_a_follower_that_becomes_leader_continues_an_idempotent_producers_sequence(
    leader: UnifiedLog, follower: UnifiedLog
):
    leader.append_as_leader(batch(pid=7, seq=0, count=2), leader_epoch=1)
    follower.append_as_follower(fetch_all(leader))
    duplicate = follower.append_as_leader(batch(pid=7, seq=0, count=2), leader_epoch=2)
    assert duplicate.duplicate and duplicate.base_offset == 0
    assert follower.append_as_leader(batch(pid=7, seq=2), leader_epoch=2).base_offset == 2


def test_a_follower_refuses_batches_below_its_end_and_corrupt_ones_writing_nothing(
    leader: UnifiedLog, follower: UnifiedLog
):
    leader.append_as_leader(batch(count=2), leader_epoch=1)
    follower.append_as_follower(fetch_all(leader))
    with pytest.raises(InvalidAppendError, match="below the expected next offset 2"):
        follower.append_as_follower(fetch_all(leader))
    leader.append_as_leader(batch(), leader_epoch=1)
    with pytest.raises(CorruptRecordError):
        follower.append_as_follower(corrupt(fetch_all(leader, 2)))
    assert follower.log_end_offset == 2


def test_truncation_drops_batches_epochs_and_producer_state_past_the_point(leader: UnifiedLog, follower: UnifiedLog):
    leader.append_as_leader(batch(pid=7, seq=0, count=2), leader_epoch=1)
    leader.append_as_leader(batch(pid=7, seq=2, count=2), leader_epoch=2)
    follower.append_as_follower(fetch_all(leader))
    assert follower.truncate_to(2)
    assert follower.log_end_offset == 2
    assert [h.base_offset for h in iter_batches(fetch_all(follower))] == [0]
    assert [(e.epoch, e.start_offset) for e in follower.epoch_cache.entries] == [(1, 0)]
    assert follower.producer_state.last_entry(7).last_offset == 1
    assert not follower.truncate_to(5)


def test_truncating_fully_restarts_the_log_at_a_later_offset(follower: UnifiedLog, leader: UnifiedLog):
    leader.append_as_leader(batch(pid=7, seq=0, count=3), leader_epoch=1)
    follower.append_as_follower(fetch_all(leader))
    follower.truncate_fully_and_start_at(10)
    assert (follower.log_start_offset, follower.log_end_offset) == (10, 10)
    assert follower.epoch_cache.entries == () and follower.producer_state.last_entry(7) is None
