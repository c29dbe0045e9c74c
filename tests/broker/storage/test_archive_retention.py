"""Retention of archiving topics: only archived segments go, and the archived offsets survive restarts."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.storage.archive_checkpoint import ARCHIVE_OFFSET_CHECKPOINT, ArchiveCheckpoints
from broker_core.storage.files import TopicPartition
from broker_core.storage.log_manager import LogManager
from broker_core.storage.retention import (
    DeletionReason,
    RetentionCandidate,
    RetentionPolicy,
    deletable_prefix,
    retention_target,
)
from tests.broker.storage.batch_factory import FakeClock, make_batch, small_config
from tests.broker.storage.test_retention import DAY, log_of_segments

ARCHIVE = "/data/archive/orders"
POLICY = RetentionPolicy(retention_ms=7 * DAY, retention_bytes=-1, delete_enabled=True)
NOW = 100 * DAY


def old_segments(count: int, records: int = 10) -> list[RetentionCandidate]:
    """``count`` segments of ``records`` offsets each, all older than retention."""
    return [RetentionCandidate(i * records, 100, NOW - 30 * DAY, (i + 1) * records) for i in range(count)]


def test_time_retention_claims_only_segments_below_the_archived_offset():
    chosen = deletable_prefix(old_segments(4), policy=POLICY, now_ms=NOW, log_start_offset=0, total_size=500,
                              archived_offset=25)
    assert [(c.base_offset, reason) for c, reason in chosen] == [(0, DeletionReason.RETENTION_MS),
                                                                  (10, DeletionReason.RETENTION_MS)]


def test_size_retention_claims_only_segments_below_the_archived_offset():
    by_size = RetentionPolicy(retention_ms=-1, retention_bytes=100, delete_enabled=True)
    chosen = deletable_prefix(old_segments(4), policy=by_size, now_ms=NOW, log_start_offset=0, total_size=500,
                              archived_offset=10)
    assert [c.base_offset for c, _ in chosen] == [0]


def test_nothing_archived_keeps_every_segment_but_the_log_start_rule_still_applies():
    assert deletable_prefix(old_segments(4), policy=POLICY, now_ms=NOW, log_start_offset=0, total_size=500,
                            archived_offset=0) == []
    chosen = deletable_prefix(old_segments(4), policy=POLICY, now_ms=NOW, log_start_offset=20, total_size=500,
                              archived_offset=0)
    assert [(c.base_offset, r) for c, r in chosen] == [(0, DeletionReason.LOG_START_OFFSET),
                                                      (10, DeletionReason.LOG_START_OFFSET)]


def test_the_retention_target_is_where_retention_would_start_the_log_without_the_archive():
    assert retention_target(old_segments(4), policy=POLICY, now_ms=NOW, log_start_offset=0, total_size=500) == 40
    young = old_segments(2) + [RetentionCandidate(20, 100, NOW, 30)]
    assert retention_target(young, policy=POLICY, now_ms=NOW, log_start_offset=0, total_size=500) == 20
    assert retention_target(old_segments(4), policy=POLICY, now_ms=NOW, log_start_offset=0, total_size=500,
                            upper_bound_offset=15) == 10
    assert retention_target([], policy=POLICY, now_ms=NOW, log_start_offset=7, total_size=0) == 7


def test_a_log_of_an_archiving_topic_deletes_only_what_is_archived(log_dir: Path, clock: FakeClock):
    log = log_of_segments(log_dir, clock, [10 * DAY, 9 * DAY, 8 * DAY, 0], retention_ms=7 * DAY,
                          spate_archive_path=ARCHIVE)
    assert log.retention_target(clock.now) == 18
    assert log.delete_old_segments(clock.now) == 0, "nothing is known archived"
    assert log.delete_old_segments(clock.now, archived_offset=12) == 2
    assert log.log_start_offset == 12
    assert log.delete_old_segments(clock.now, archived_offset=100) == 1
    assert log.log_start_offset == 18


def test_a_log_of_a_topic_without_archive_ignores_archived_offsets(log_dir: Path, clock: FakeClock):
    log = log_of_segments(log_dir, clock, [10 * DAY, 9 * DAY, 0], retention_ms=7 * DAY)
    assert log.delete_old_segments(clock.now, archived_offset=0) == 2


def test_archived_offsets_grow_only_and_survive_a_reopen(tmp_path: Path):
    tp = TopicPartition("orders", 0)
    checkpoints = ArchiveCheckpoints([tmp_path])
    assert checkpoints.get(tmp_path, tp) is None
    assert checkpoints.update(tmp_path, tp, 120, live=[tp]) == 120
    assert checkpoints.update(tmp_path, tp, 80, live=[tp]) == 120
    assert ArchiveCheckpoints([tmp_path]).get(tmp_path, tp) == 120
    with pytest.raises(ValueError):
        checkpoints.update(tmp_path, tp, -1, live=[tp])


def test_an_unreadable_archive_checkpoint_means_nothing_is_known_archived(tmp_path: Path):
    (tmp_path / ARCHIVE_OFFSET_CHECKPOINT).write_text("0\n1\norders zero 12\n")
    assert ArchiveCheckpoints([tmp_path]).get(tmp_path, TopicPartition("orders", 0)) is None


def test_the_log_manager_applies_recorded_archived_offsets_across_restarts(tmp_path: Path, clock: FakeClock):
    config = small_config(segment_bytes=200, retention_ms=DAY, spate_archive_path=ARCHIVE)
    first = LogManager([tmp_path], config, clock=clock)
    log = first.get_or_create_log("orders", 0)
    for _ in range(12):
        log.append(make_batch(records=2, max_timestamp=clock.now - 3 * DAY, payload_size=40))
    assert len(log.segments) > 3
    assert first.run_retention(clock.now) == 0
    second_segment = log.segments[2].base_offset
    assert first.record_archived_offset(TopicPartition("orders", 0), second_segment) == second_segment
    first.shutdown()

    second = LogManager([tmp_path], config, clock=clock)
    assert second.archived_offset(TopicPartition("orders", 0)) == second_segment
    assert second.run_retention(clock.now) == 2
    assert second.get_log("orders", 0).log_start_offset == second_segment


def test_a_deleted_partition_forgets_its_archived_offset(tmp_path: Path, clock: FakeClock):
    config = small_config(spate_archive_path=ARCHIVE)
    logs = LogManager([tmp_path], config, clock=clock)
    logs.get_or_create_log("orders", 0)
    logs.record_archived_offset(TopicPartition("orders", 0), 0)
    logs.delete_log("orders", 0)
    logs.get_or_create_log("orders", 0)
    assert logs.archived_offset(TopicPartition("orders", 0)) is None
    assert ArchiveCheckpoints([tmp_path]).get(tmp_path, TopicPartition("orders", 0)) is None
