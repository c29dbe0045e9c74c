"""OffsetCommit and OffsetFetch: who may commit, what is stored, and what comes back."""

from __future__ import annotations

import pytest

from broker_core.coordinator.group import GroupState
from broker_core.coordinator.group.offsets_log import (
    OffsetCommitKey,
    decode_key,
    decode_offset_commit_value,
)
from broker_core.coordinator.group.results import FetchedOffset, OffsetCommitEntry
from broker_core.storage.files import TopicPartition
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import START_MS, Harness

E = ErrorCode
S = GroupState
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


@pytest.fixture
def h() -> Harness:
    return Harness()


def commit(h: Harness, offsets: dict, *, group: str = "g", member: str = "", generation: int = -1,
           instance: str | None = None, retention_ms: int = -1) -> dict:
    return h.coordinator.commit_offsets(
        group_id=group, member_id=member, group_instance_id=instance, generation_id=generation,
        offsets={tp: OffsetCommitEntry(*v) if isinstance(v, tuple) else OffsetCommitEntry(v) for tp, v in offsets.items()},
        retention_time_ms=retention_ms,
    )


def fetch(h: Harness, partitions=None, group: str = "g"):
    return h.coordinator.fetch_offsets(group_id=group, partitions=partitions)


def test_a_simple_commit_without_a_generation_creates_an_offsets_only_group(h: Harness) -> None:
    assert commit(h, {T0: (5, 2, "meta")}) == {T0: E.NONE}
    group = h.group()
    assert group.state is S.EMPTY and group.protocol_type is None
    assert fetch(h, [T0]).offsets[T0] == FetchedOffset(5, 2, "meta")


def test_the_commit_is_a_record_in_the_groups_partition(h: Harness) -> None:
    commit(h, {T0: (5, 2, "meta")})
    (record,) = h.topic.records()
    assert decode_key(record.key) == OffsetCommitKey("g", "t", 0)
    stored = decode_offset_commit_value(record.value)
    assert (stored.offset, stored.leader_epoch, stored.metadata, stored.commit_timestamp_ms) == (5, 2, "meta", START_MS)
    partition = h.coordinator.partition_for("g")
    assert list(h.topic.batches) == [partition]


def test_null_metadata_is_stored_as_empty(h: Harness) -> None:
    commit(h, {T0: (1, -1, None)})
    assert fetch(h, [T0]).offsets[T0].metadata == ""


def test_fetch_of_partitions_without_commits_answers_minus_one(h: Harness) -> None:
    commit(h, {T0: 3})
    result = fetch(h, [T0, T1])
    assert result.offsets[T1] == FetchedOffset(-1, -1, "")
    assert fetch(h, [T0], group="unknown").offsets[T0].offset == -1


def test_fetch_of_all_partitions_returns_everything_committed(h: Harness) -> None:
    commit(h, {T0: 3, T1: 4})
    assert {tp: f.offset for tp, f in fetch(h).offsets.items()} == {T0: 3, T1: 4}
    assert fetch(h, group="unknown").offsets == {}


def test_a_later_commit_replaces_an_earlier_one(h: Harness) -> None:
    commit(h, {T0: 3})
    commit(h, {T0: 9})
    assert fetch(h, [T0]).offsets[T0].offset == 9


def test_oversized_metadata_is_refused_per_partition_and_never_written() -> None:
    h = Harness(offset_metadata_max_bytes=10)
    outcome = commit(h, {T0: (1, -1, "x" * 11), T1: (2, -1, "y" * 10)})
    assert outcome == {T0: E.OFFSET_METADATA_TOO_LARGE, T1: E.NONE}
    assert [decode_key(r.key) for r in h.topic.records()] == [OffsetCommitKey("g", "t", 1)]
    assert fetch(h, [T0]).offsets[T0].offset == -1


def test_metadata_length_counts_utf16_units_like_java() -> None:
    h = Harness(offset_metadata_max_bytes=2)
    assert commit(h, {T0: (1, -1, "\U0001F600")}) == {T0: E.NONE}  # one surrogate pair = 2 units
    assert commit(h, {T0: (1, -1, "\U0001F600a")}) == {T0: E.OFFSET_METADATA_TOO_LARGE}


def test_a_failed_append_reports_a_coordinator_error_and_changes_nothing(h: Harness) -> None:
    commit(h, {T0: 3})
    for injected, expected in [
        (E.NOT_LEADER_OR_FOLLOWER, E.NOT_COORDINATOR),
        (E.NOT_ENOUGH_REPLICAS, E.COORDINATOR_NOT_AVAILABLE),
        (E.MESSAGE_TOO_LARGE, E.INVALID_COMMIT_OFFSET_SIZE),
        (E.KAFKA_STORAGE_ERROR, E.NOT_COORDINATOR),
    ]:
        h.topic.fail_with = injected
        assert commit(h, {T0: 99}) == {T0: expected}
        assert fetch(h, [T0]).offsets[T0].offset == 3


def test_group_members_commit_with_their_generation(h: Harness) -> None:
    member = h.form_group(1)[0].member_id
    assert commit(h, {T0: 7}, member=member, generation=1) == {T0: E.NONE}
    assert fetch(h, [T0]).offsets[T0].offset == 7


def test_commit_errors_for_unknown_members_and_stale_generations(h: Harness) -> None:
    assert commit(h, {T0: 1}, group="nobody", member="m", generation=3) == {T0: E.ILLEGAL_GENERATION}
    member = h.form_group(1)[0].member_id
    assert commit(h, {T0: 1}, member="ghost", generation=1) == {T0: E.UNKNOWN_MEMBER_ID}
    assert commit(h, {T0: 1}, member=member, generation=0) == {T0: E.ILLEGAL_GENERATION}
    assert commit(h, {T0: 1}) == {T0: E.UNKNOWN_MEMBER_ID}  # a simple commit into an active group
    assert fetch(h, [T0]).offsets[T0].offset == -1


def test_commit_during_completing_rebalance_is_rebalance_in_progress(h: Harness) -> None:
    reply = h.join_new()
    h.scheduler.advance(0)
    assert commit(h, {T0: 1}, member=reply.result.member_id, generation=1) == {T0: E.REBALANCE_IN_PROGRESS}


def test_commit_during_preparing_rebalance_is_accepted(h: Harness) -> None:
    results = h.form_group(2)
    h.join_new()
    assert h.group().state is S.PREPARING_REBALANCE
    assert commit(h, {T0: 4}, member=results[0].member_id, generation=1) == {T0: E.NONE}


def test_commit_and_fetch_group_level_errors(h: Harness) -> None:
    fresh = Harness(create_topic=False)
    assert commit(fresh, {T0: 1}) == {T0: E.NOT_COORDINATOR}
    assert fetch(fresh, [T0]).error is E.NOT_COORDINATOR
    h.coordinator.shutdown()
    assert commit(h, {T0: 1}) == {T0: E.COORDINATOR_NOT_AVAILABLE}


def test_an_empty_group_id_may_commit_and_fetch_like_kafka(h: Harness) -> None:
    assert commit(h, {T0: 2}, group="") == {T0: E.NONE}
    assert fetch(h, [T0], group="").offsets[T0].offset == 2


def test_a_retention_time_from_an_old_client_is_stored_as_an_expire_timestamp(h: Harness) -> None:
    commit(h, {T0: 2}, retention_ms=60_000)
    (record,) = h.topic.records()
    assert decode_offset_commit_value(record.value).expire_timestamp_ms == START_MS + 60_000
