"""Expiring old offsets, and Empty groups left with nothing stored."""

from __future__ import annotations

from broker_core.coordinator.group import GroupState
from broker_core.coordinator.group.results import OffsetCommitEntry
from broker_core.storage.files import TopicPartition
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import (
    Harness,
)

E = ErrorCode
S = GroupState
T0, U0 = TopicPartition("t", 0), TopicPartition("u", 0)
HOUR = 3600_000


def commit(h: Harness, offsets: dict, *, group: str = "g", member: str = "", generation: int = -1) -> dict:
    return h.coordinator.commit_offsets(
        group_id=group, member_id=member, group_instance_id=None, generation_id=generation,
        offsets={tp: OffsetCommitEntry(o) for tp, o in offsets.items()},
    )


def offset(h: Harness, tp: TopicPartition, group: str = "g") -> int:
    return h.coordinator.fetch_offsets(group_id=group, partitions=[tp]).offsets[tp].offset


def test_offsets_of_an_empty_group_expire_after_retention_since_it_became_empty() -> None:
    h = Harness(offsets_retention_ms=24 * HOUR, offsets_retention_check_interval_ms=HOUR)
    member = h.form_group(1)[0].member_id
    commit(h, {T0: 3}, member=member, generation=1)
    h.scheduler.advance(10_000)  # heartbeats stop: the member expires and the group empties
    assert h.group().state is S.EMPTY
    h.scheduler.advance(24 * HOUR - 10_000)  # the hourly check at 24 h finds it 10 s short of retention
    assert offset(h, T0) == 3
    h.scheduler.advance(HOUR)
    assert h.group() is None  # no offsets left: the group itself is removed


def test_offsets_of_an_active_consumer_group_do_not_expire_for_subscribed_topics() -> None:
    h = Harness(offsets_retention_ms=HOUR, offsets_retention_check_interval_ms=HOUR)
    results = h.form_group(1, session_ms=60_000)  # subscribed to "t"
    member = results[0].member_id
    commit(h, {T0: 3, U0: 4}, member=member, generation=1)
    for _ in range(130):
        h.scheduler.advance(55_000)
        h.heartbeat(member, 1)
    assert offset(h, T0) == 3
    assert offset(h, U0) == -1  # not subscribed, committed long ago


def test_simple_group_offsets_expire_from_their_commit_time() -> None:
    h = Harness(offsets_retention_ms=HOUR, offsets_retention_check_interval_ms=HOUR // 2)
    commit(h, {T0: 3}, group="simple")
    h.scheduler.advance(HOUR // 2)
    commit(h, {U0: 4}, group="simple")
    h.scheduler.advance(HOUR // 2)
    assert offset(h, T0, "simple") == -1 and offset(h, U0, "simple") == 4
    h.scheduler.advance(HOUR // 2)
    assert h.group("simple") is None


def test_an_explicit_expire_timestamp_wins() -> None:
    h = Harness(offsets_retention_ms=100 * HOUR, offsets_retention_check_interval_ms=HOUR)
    h.coordinator.commit_offsets(
        group_id="g", member_id="", group_instance_id=None, generation_id=-1,
        offsets={T0: OffsetCommitEntry(1)}, retention_time_ms=2 * HOUR,
    )
    h.scheduler.advance(2 * HOUR)
    assert offset(h, T0) == -1


def test_expired_offsets_are_tombstoned_so_a_restart_does_not_bring_them_back() -> None:
    h = Harness(offsets_retention_ms=HOUR, offsets_retention_check_interval_ms=HOUR)
    commit(h, {T0: 3})
    h.scheduler.advance(HOUR)
    assert h.restart().group() is None
