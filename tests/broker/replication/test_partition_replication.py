"""A partition's replication bookkeeping: follower positions, the high watermark, ISR changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.replication.partition import Partition
from broker_core.storage.config import LogConfig
from broker_core.storage.local_log import LocalLog
from broker_core.storage.unified_log import UnifiedLog
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
