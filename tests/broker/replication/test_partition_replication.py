"""A partition's replication bookkeeping: follower positions, the high watermark, ISR changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.replication.partition import IsrChangeInFlightError, Partition
from broker_core.storage.config import LogConfig
from broker_core.storage.local_log import LocalLog
from broker_core.storage.unified_log import UnifiedLog
from spate.protocol.errors import ErrorCode, KafkaError
from spate.records import Record, build_batch

LAG_MS = 30_000


def records(count: int) -> bytes:
    return build_batch([Record(i, 1_000 + i, None, b"v") for i in range(count)])


def open_partition(directory: Path, node_id: int) -> Partition:
    log = UnifiedLog(LocalLog.open(directory, LogConfig(), clock=lambda: 0), clock=lambda: 0,
                     producer_id_expiration_ms=60_000)
    return Partition("t", 0, log, leader_epoch=0, node_id=node_id)


@pytest.fixture
def leader(tmp_path: Path) -> Partition:
    partition = open_partition(tmp_path / "leader", node_id=1)
    partition.make_leader(1, isr=(1, 2, 3), replicas=(1, 2, 3), partition_epoch=4, now_ms=0)
    return partition


def test_the_high_watermark_waits_for_every_in_sync_replica(leader: Partition):
    leader.append_records(records(5))
    assert leader.high_watermark == 0
    assert not leader.update_follower_fetch(2, 5, now_ms=10)
    assert leader.update_follower_fetch(3, 3, now_ms=10)
    assert leader.high_watermark == 3
    assert leader.update_follower_fetch(3, 5, now_ms=20) and leader.high_watermark == 5


def test_a_single_replica_commits_at_once(tmp_path: Path):
    partition = open_partition(tmp_path, node_id=1)
    partition.make_leader(1)
    partition.append_records(records(3))
    assert partition.high_watermark == 3


def test_a_follower_that_stops_catching_up_is_proposed_out_of_the_isr(leader: Partition):
    leader.append_records(records(5))
    leader.update_follower_fetch(2, 5, now_ms=1_000)
    leader.update_follower_fetch(3, 2, now_ms=1_000)
    assert leader.isr_to_shrink(now_ms=LAG_MS, max_lag_ms=LAG_MS) is None
    assert leader.isr_to_shrink(now_ms=LAG_MS + 1, max_lag_ms=LAG_MS) == (1, 2)
    assert leader.apply_isr((1, 2), partition_epoch=5) and leader.high_watermark == 5


def test_a_follower_back_at_the_high_watermark_may_rejoin(leader: Partition):
    leader.append_records(records(4))
    leader.apply_isr((1, 2), partition_epoch=5)
    leader.update_follower_fetch(2, 4, now_ms=10)
    leader.update_follower_fetch(3, 2, now_ms=10)
    assert leader.isr_to_expand(3) is None
    leader.update_follower_fetch(3, 4, now_ms=20)
    assert leader.isr_to_expand(3) == (1, 2, 3)
    assert leader.isr_to_expand(2) is None


def test_a_follower_takes_the_leaders_batches_and_high_watermark_capped_by_its_own_end(tmp_path: Path,
                                                                                     leader: Partition):
    leader.append_records(records(4))
    follower = open_partition(tmp_path / "follower", node_id=2)
    follower.make_follower(1, 1, isr=(1, 2, 3), replicas=(1, 2, 3))
    assert not follower.is_leader
    follower.append_as_follower(leader.read(0, 1 << 20, isolation_level=0, min_one_batch=True,
                                            for_replica=True).slice.read_bytes())
    follower.update_high_watermark_as_follower(10)
    assert follower.high_watermark == 4 == follower.log_end_offset
    follower.truncate_to(2)
    assert follower.high_watermark == follower.log_end_offset == 0


# --- caught up, in sync -----------------------------------------------------------------------


def test_a_follower_reaching_where_the_leader_ended_at_its_previous_fetch_was_caught_up_then(leader: Partition):
    leader.append_records(records(5))
    leader.update_follower_fetch(2, 0, now_ms=1_000)  # the leader ended at 5
    leader.update_follower_fetch(3, 5, now_ms=1_000)
    leader.append_records(records(5))  # the leader ends at 10 by the next fetch
    leader.update_follower_fetch(2, 5, now_ms=2_000)
    assert leader.follower(2).last_caught_up_ms == 1_000
    leader.update_follower_fetch(2, 10, now_ms=3_000)
    assert leader.follower(2).last_caught_up_ms == 3_000


def test_a_follower_never_reaching_the_end_under_steady_appends_stays_in_sync(leader: Partition):
    now = 0
    for _ in range(10):
        leader.append_records(records(2))
        now += LAG_MS // 2
        end = leader.log_end_offset
        leader.update_follower_fetch(2, end - 2, now_ms=now)
        leader.update_follower_fetch(3, end - 2, now_ms=now)
        assert leader.isr_to_shrink(now_ms=now, max_lag_ms=LAG_MS) is None


def test_a_follower_whose_log_ends_where_the_leaders_does_stays_in_sync_without_fetching(leader: Partition):
    leader.append_records(records(3))
    leader.update_follower_fetch(2, 3, now_ms=0)
    leader.update_follower_fetch(3, 3, now_ms=0)
    assert leader.isr_to_shrink(now_ms=10 * LAG_MS, max_lag_ms=LAG_MS) is None
    leader.append_records(records(1))
    assert leader.isr_to_shrink(now_ms=10 * LAG_MS, max_lag_ms=LAG_MS) == (1,)


def test_a_follower_that_never_fetched_leaves_after_the_lag(leader: Partition):
    assert leader.isr_to_shrink(now_ms=LAG_MS, max_lag_ms=LAG_MS) is None
    assert leader.isr_to_shrink(now_ms=LAG_MS + 1, max_lag_ms=LAG_MS) == (1,)


def test_a_follower_rejoins_only_once_it_reached_the_start_of_the_leaders_epoch(tmp_path: Path):
    partition = open_partition(tmp_path, node_id=1)
    partition.append_records(records(6))  # written under epoch 0
    partition.make_leader(1, isr=(1,), replicas=(1, 2), now_ms=0)  # epoch 1 starts at 6
    assert partition.leader_epoch_start_offset == 6 and partition.high_watermark == 6
    partition.update_follower_fetch(2, 6, now_ms=1)
    assert partition.isr_to_expand(2) == (1, 2)
    assert partition.isr_to_expand(4) is None  # not a replica


def test_a_replica_outside_the_isr_does_not_hold_the_high_watermark(tmp_path: Path):
    partition = open_partition(tmp_path, node_id=1)
    partition.make_leader(1, isr=(1,), replicas=(1, 2), now_ms=0)
    partition.append_records(records(3))
    assert partition.high_watermark == 3


# --- ISR changes in flight --------------------------------------------------------------------


def test_while_an_isr_change_is_in_flight_no_other_is_proposed(leader: Partition):
    leader.propose_isr((1, 2))
    assert leader.isr_to_shrink(now_ms=10 * LAG_MS, max_lag_ms=LAG_MS) is None
    with pytest.raises(IsrChangeInFlightError):
        leader.propose_isr((1,))
    leader.abandon_isr_change()
    assert leader.isr_to_shrink(now_ms=10 * LAG_MS, max_lag_ms=LAG_MS) == (1,)


def test_a_follower_taken_out_at_a_new_epoch_rejoins_only_after_a_fetch_in_that_epoch(tmp_path: Path):
    partition = open_partition(tmp_path, node_id=1)
    partition.make_leader(0, isr=(1, 2), replicas=(1, 2), now_ms=0)
    partition.update_follower_fetch(2, 0, now_ms=1)  # caught up on an idle partition
    # The controller took broker 2 out (its broker is shutting down) with a new leader epoch.
    partition.make_leader(1, isr=(1,), replicas=(1, 2), now_ms=2)
    assert partition.follower(2).log_end_offset == 0  # its position is kept ...
    assert partition.isr_to_expand(2) is None  # ... but proves nothing about the new epoch
    partition.update_follower_fetch(2, 0, now_ms=3)
    assert partition.isr_to_expand(2) == (1, 2)


def test_a_follower_being_added_holds_the_high_watermark_until_the_change_is_written(leader: Partition):
    leader.apply_isr((1, 2), partition_epoch=5)
    leader.update_follower_fetch(2, 0, now_ms=1)
    leader.update_follower_fetch(3, 0, now_ms=1)
    proposed = leader.isr_to_expand(3)
    assert proposed == (1, 2, 3)
    leader.propose_isr(proposed)
    assert leader.maximal_isr == (1, 2, 3) and leader.isr == (1, 2)
    leader.append_records(records(4))
    assert not leader.update_follower_fetch(2, 4, now_ms=2)
    assert leader.high_watermark == 0  # follower 3 counts already
    assert leader.isr_to_expand(3) is None
    leader.update_follower_fetch(3, 4, now_ms=2)
    assert leader.high_watermark == 4
    leader.apply_isr((1, 2, 3), partition_epoch=6)
    assert leader.pending_isr is None and leader.partition_epoch == 6


def test_a_follower_being_removed_holds_the_high_watermark_until_the_change_is_written(leader: Partition):
    leader.append_records(records(4))
    leader.update_follower_fetch(2, 4, now_ms=1)
    leader.propose_isr((1, 2))
    assert leader.high_watermark == 0  # follower 3 is still in the ISR
    assert leader.apply_isr((1, 2), partition_epoch=5) and leader.high_watermark == 4


# --- acks=all ---------------------------------------------------------------------------------


def test_an_acks_all_append_needs_min_insync_replicas_in_the_isr(leader: Partition):
    leader.min_insync_replicas = 3
    leader.append_records(records(1), required_acks=-1)
    leader.apply_isr((1, 2), partition_epoch=5)
    with pytest.raises(KafkaError) as refused:
        leader.append_records(records(1), required_acks=-1)
    assert refused.value.code == ErrorCode.NOT_ENOUGH_REPLICAS
    assert leader.log_end_offset == 1
    leader.append_records(records(1), required_acks=1)
    assert leader.log_end_offset == 2


def test_an_acks_all_append_is_done_once_the_high_watermark_passes_it(leader: Partition):
    leader.min_insync_replicas = 2
    result = leader.append_records(records(3), required_acks=-1)
    required = result.last_offset + 1
    assert leader.check_enough_replicas_reach_offset(required) == (False, ErrorCode.NONE)
    leader.update_follower_fetch(2, 3, now_ms=1)
    assert leader.check_enough_replicas_reach_offset(required) == (False, ErrorCode.NONE)
    leader.update_follower_fetch(3, 3, now_ms=1)
    assert leader.check_enough_replicas_reach_offset(required) == (True, ErrorCode.NONE)


def test_an_isr_shrunk_below_min_insync_after_the_append_is_reported(leader: Partition):
    leader.min_insync_replicas = 2
    result = leader.append_records(records(3), required_acks=-1)
    leader.apply_isr((1,), partition_epoch=5)
    assert leader.high_watermark == 3
    assert leader.check_enough_replicas_reach_offset(result.last_offset + 1) == (
        True, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    )


# --- leadership -------------------------------------------------------------------------------


def test_a_deposed_leader_refuses_appends_and_fails_waiting_acks(leader: Partition):
    result = leader.append_records(records(2), required_acks=-1)
    leader.propose_isr((1, 2))
    leader.depose()
    assert not leader.is_leader and leader.pending_isr is None
    assert leader.check_enough_replicas_reach_offset(result.last_offset + 1) == (
        True, ErrorCode.NOT_LEADER_OR_FOLLOWER,
    )
    with pytest.raises(KafkaError) as refused:
        leader.append_records(records(1))
    assert refused.value.code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    leader.make_leader(2, isr=(1, 2, 3), replicas=(1, 2, 3), partition_epoch=7, now_ms=5)
    assert leader.is_leader and leader.follower(2).log_end_offset == -1
    leader.append_records(records(1))


def test_a_leader_re_elected_for_a_new_epoch_keeps_its_followers_positions(leader: Partition):
    leader.append_records(records(4))
    leader.update_follower_fetch(2, 4, now_ms=1)
    leader.update_follower_fetch(3, 2, now_ms=1)
    leader.make_leader(2, isr=(1, 2, 3), replicas=(1, 2, 3), partition_epoch=5, controller_epoch=3, now_ms=10)
    assert leader.follower(2).log_end_offset == 4 and leader.follower(3).log_end_offset == 2
    assert leader.follower(2).last_caught_up_ms == 10
    assert leader.controller_epoch == 3 and leader.leader_epoch_start_offset == 4


def test_a_leader_that_became_follower_forgets_its_followers(leader: Partition):
    leader.update_follower_fetch(2, 0, now_ms=1)
    leader.propose_isr((1, 2))
    leader.make_follower(2, 2, isr=(1, 2, 3), replicas=(1, 2, 3))
    assert leader.pending_isr is None and leader.follower(2) is None
    assert not leader.update_follower_fetch(3, 0, now_ms=2)
    assert leader.isr_to_shrink(now_ms=10 * LAG_MS, max_lag_ms=LAG_MS) is None
    assert leader.check_enough_replicas_reach_offset(0) == (True, ErrorCode.NOT_LEADER_OR_FOLLOWER)
