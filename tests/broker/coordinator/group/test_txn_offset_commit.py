"""TxnOffsetCommit: offsets committed inside a transaction, and what its end does to them."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_core.coordinator.group import GroupCoordinator, GroupState
from broker_core.coordinator.group.group_loader import replay
from broker_core.coordinator.group.offsets_log import (
    OffsetCommitKey,
    decode_key,
    decode_offset_commit_value,
)
from broker_core.coordinator.group.results import (
    FetchedOffset,
    MemberIdentity,
    OffsetCommitEntry,
)
from broker_core.storage.files import TopicPartition
from spate.protocol.errors import ErrorCode
from spate.records import NO_SEQUENCE, Record, build_batch
from spate.records.reader import decode_batch
from tests.broker.coordinator.group.group_harness import Harness

E = ErrorCode
S = GroupState
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
HOUR = 3600_000
PID, OTHER_PID = 4000, 4001


@dataclass
class RecordingVerifier:
    """Answers ``answer`` and remembers what it was asked."""

    answer: ErrorCode = E.NONE
    calls: list[tuple[str, int, int, str]] = field(default_factory=list)

    def __call__(self, transactional_id: str, producer_id: int, producer_epoch: int, group_id: str) -> ErrorCode:
        self.calls.append((transactional_id, producer_id, producer_epoch, group_id))
        return self.answer


@pytest.fixture
def h() -> Harness:
    return Harness()


def txn_commit(h: Harness, offsets: dict, *, group: str = "g", producer_id: int = PID, epoch: int = 0,
               transactional_id: str = "tx", **member) -> dict:
    return h.coordinator.handle_txn_offset_commit(
        transactional_id=transactional_id, group_id=group, producer_id=producer_id, producer_epoch=epoch,
        offsets={tp: OffsetCommitEntry(*v) if isinstance(v, tuple) else OffsetCommitEntry(v)
                 for tp, v in offsets.items()},
        **member,
    )


def plain_commit(h: Harness, offsets: dict, *, group: str = "g") -> dict:
    return h.coordinator.commit_offsets(
        group_id=group, member_id="", group_instance_id=None, generation_id=-1,
        offsets={tp: OffsetCommitEntry(o) for tp, o in offsets.items()},
    )


def end_txn(h: Harness, *, commit: bool, producer_id: int = PID, group: str = "g") -> None:
    """What the transaction coordinator does: the marker into the group's partition, then the hook."""
    partition = h.coordinator.partition_for(group)
    h.topic.write_marker(partition, producer_id, commit=commit)
    h.coordinator.complete_transactional_offsets(offsets_partition=partition, producer_id=producer_id, commit=commit)


def fetched(h: Harness, tp: TopicPartition, group: str = "g", **kwargs) -> FetchedOffset:
    return h.coordinator.fetch_offsets(group_id=group, partitions=[tp], **kwargs).offsets[tp]


def offset(h: Harness, tp: TopicPartition, group: str = "g") -> int:
    return fetched(h, tp, group).offset


# --- writing ------------------------------------------------------------------------------


def test_offsets_of_an_open_transaction_are_not_visible_to_offset_fetch(h: Harness) -> None:
    plain_commit(h, {T0: 3})
    assert txn_commit(h, {T0: 7, T1: 8}) == {T0: E.NONE, T1: E.NONE}
    assert offset(h, T0) == 3 and offset(h, T1) == -1
    assert set(h.coordinator.fetch_offsets(group_id="g", partitions=None).offsets) == {T0}


def test_a_stable_fetch_is_told_unstable_offset_commit_for_partitions_of_an_open_transaction(h: Harness) -> None:
    plain_commit(h, {T0: 3})
    txn_commit(h, {T0: 7})
    assert fetched(h, T0, require_stable=True).error is E.UNSTABLE_OFFSET_COMMIT
    assert fetched(h, T1, require_stable=True) == FetchedOffset()
    end_txn(h, commit=True)
    assert fetched(h, T0, require_stable=True) == FetchedOffset(7)


def test_the_offsets_are_one_transactional_batch_of_the_producer_in_the_groups_partition(h: Harness) -> None:
    txn_commit(h, {T0: (7, 2, "meta"), T1: 8}, epoch=5)
    partition = h.coordinator.partition_for("g")
    (raw,) = h.topic.batches[partition]
    batch = decode_batch(raw)
    header = batch.header
    assert header.is_transactional and not header.is_control
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (PID, 5, NO_SEQUENCE)
    assert [decode_key(r.key) for r in batch.records] == [OffsetCommitKey("g", "t", 0), OffsetCommitKey("g", "t", 1)]
    stored = decode_offset_commit_value(batch.records[0].value)
    assert (stored.offset, stored.leader_epoch, stored.metadata) == (7, 2, "meta")


def test_a_group_that_does_not_exist_yet_is_created_empty(h: Harness) -> None:
    assert txn_commit(h, {T0: 7}, group="new") == {T0: E.NONE}
    group = h.group("new")
    assert group.state is S.EMPTY and group.protocol_type is None and group.generation_id == 0


def test_metadata_over_the_limit_is_refused_for_that_partition_only() -> None:
    h = Harness(offset_metadata_max_bytes=4)
    assert txn_commit(h, {T0: (7, -1, "12345"), T1: (8, -1, "1234")}) == {
        T0: E.OFFSET_METADATA_TOO_LARGE, T1: E.NONE,
    }
    end_txn(h, commit=True)
    assert offset(h, T0) == -1 and offset(h, T1) == 8


def test_a_failed_write_leaves_nothing_pending(h: Harness) -> None:
    h.topic.fail_with = E.NOT_LEADER_OR_FOLLOWER
    assert txn_commit(h, {T0: 7}) == {T0: E.NOT_COORDINATOR}
    h.topic.fail_with = None
    assert h.group().pending_txn_offsets == {}


# --- checks -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error", [E.INVALID_TXN_STATE, E.INVALID_PRODUCER_ID_MAPPING, E.PRODUCER_FENCED, E.CONCURRENT_TRANSACTIONS]
)
def test_the_transaction_coordinators_refusal_is_the_answer_and_nothing_is_written(error: ErrorCode) -> None:
    verifier = RecordingVerifier(error)
    h = Harness(txn_verifier=verifier)
    assert txn_commit(h, {T0: 7, T1: 8}, transactional_id="copier", epoch=3, group="g") == {T0: error, T1: error}
    assert verifier.calls == [("copier", PID, 3, "g")]
    assert h.topic.records() == [] and h.group() is None


def test_an_accepted_transaction_is_verified_once_per_request() -> None:
    verifier = RecordingVerifier()
    h = Harness(txn_verifier=verifier)
    txn_commit(h, {T0: 7, T1: 8}, transactional_id="copier", epoch=2)
    assert verifier.calls == [("copier", PID, 2, "g")]


def test_an_empty_group_id_is_invalid(h: Harness) -> None:
    assert txn_commit(h, {T0: 7}, group="") == {T0: E.INVALID_GROUP_ID}


def test_a_group_of_a_partition_not_led_here_gets_not_coordinator() -> None:
    h = Harness(create_topic=False)
    assert txn_commit(h, {T0: 7}) == {T0: E.NOT_COORDINATOR}


def test_member_fields_are_checked_when_given(h: Harness) -> None:
    member = h.form_group(1, instance="i1")[0].member_id
    assert txn_commit(h, {T0: 1}, member_id="stranger", generation_id=1) == {T0: E.UNKNOWN_MEMBER_ID}
    assert txn_commit(h, {T0: 1}, member_id=member, generation_id=7) == {T0: E.ILLEGAL_GENERATION}
    assert txn_commit(h, {T0: 1}, member_id="old", group_instance_id="i1") == {T0: E.FENCED_INSTANCE_ID}
    assert txn_commit(h, {T0: 1}, member_id=member, generation_id=1, group_instance_id="i1") == {T0: E.NONE}
    # Without member fields (TxnOffsetCommit v0-v2) a Stable group accepts the commit.
    assert txn_commit(h, {T1: 2}) == {T1: E.NONE}


# --- completion ---------------------------------------------------------------------------


def test_commit_makes_the_offsets_visible(h: Harness) -> None:
    txn_commit(h, {T0: (7, 2, "meta")})
    end_txn(h, commit=True)
    assert fetched(h, T0) == FetchedOffset(7, 2, "meta")
    assert h.group().pending_txn_offsets == {}


def test_abort_discards_the_offsets(h: Harness) -> None:
    plain_commit(h, {T0: 3})
    txn_commit(h, {T0: 7, T1: 8})
    end_txn(h, commit=False)
    assert offset(h, T0) == 3 and offset(h, T1) == -1
    assert h.group().pending_txn_offsets == {}


def test_a_later_write_in_the_same_transaction_replaces_an_earlier_one(h: Harness) -> None:
    txn_commit(h, {T0: 7})
    txn_commit(h, {T0: 9})
    end_txn(h, commit=True)
    assert offset(h, T0) == 9


def test_only_the_producer_named_by_the_marker_is_completed(h: Harness) -> None:
    txn_commit(h, {T0: 7}, producer_id=PID)
    txn_commit(h, {T1: 8}, producer_id=OTHER_PID)
    end_txn(h, commit=True, producer_id=PID)
    assert offset(h, T0) == 7 and offset(h, T1) == -1
    assert set(h.group().pending_txn_offsets) == {OTHER_PID}


def test_a_marker_completes_every_group_of_its_partition_and_no_other(h: Harness) -> None:
    partition = h.coordinator.partition_for("g")
    same = next(g for g in (f"g{i}" for i in range(100)) if h.coordinator.partition_for(g) == partition)
    elsewhere = next(g for g in (f"g{i}" for i in range(100)) if h.coordinator.partition_for(g) != partition)
    for group in ("g", same, elsewhere):
        txn_commit(h, {T0: 7}, group=group)
    end_txn(h, commit=True, group="g")
    assert offset(h, T0, "g") == 7 and offset(h, T0, same) == 7
    assert offset(h, T0, elsewhere) == -1


def test_a_plain_commit_made_while_the_transaction_was_open_wins_over_it(h: Harness) -> None:
    txn_commit(h, {T0: 7})
    plain_commit(h, {T0: 3})
    end_txn(h, commit=True)
    assert offset(h, T0) == 3


def test_the_transaction_wins_over_plain_commits_made_before_it(h: Harness) -> None:
    plain_commit(h, {T0: 3})
    txn_commit(h, {T0: 7})
    end_txn(h, commit=True)
    assert offset(h, T0) == 7
    plain_commit(h, {T0: 9})
    assert offset(h, T0) == 9


# --- loading ------------------------------------------------------------------------------


def test_an_open_transaction_stays_pending_across_a_restart_and_can_still_commit(h: Harness) -> None:
    plain_commit(h, {T0: 3})
    txn_commit(h, {T0: 7, T1: 8})
    restarted = h.restart()
    assert offset(restarted, T0) == 3 and offset(restarted, T1) == -1
    assert set(restarted.group().pending_txn_offsets) == {PID}
    end_txn(restarted, commit=True)
    assert offset(restarted, T0) == 7 and offset(restarted, T1) == 8


def test_a_group_holding_only_an_open_transaction_comes_back_after_a_restart(h: Harness) -> None:
    txn_commit(h, {T0: 7}, group="fresh")
    restarted = h.restart()
    assert restarted.group("fresh").state is S.EMPTY
    end_txn(restarted, commit=False, group="fresh")
    assert offset(restarted, T0, "fresh") == -1


def test_committed_and_aborted_transactions_replay_to_the_same_offsets(h: Harness) -> None:
    txn_commit(h, {T0: 7}, producer_id=PID)
    txn_commit(h, {T1: 8}, producer_id=OTHER_PID)
    end_txn(h, commit=True, producer_id=PID)
    end_txn(h, commit=False, producer_id=OTHER_PID)
    restarted = h.restart()
    assert offset(restarted, T0) == 7 and offset(restarted, T1) == -1
    assert restarted.group().pending_txn_offsets == {}


def test_replay_orders_a_transaction_against_plain_commits_by_log_position(h: Harness) -> None:
    plain_commit(h, {T1: 1})
    txn_commit(h, {T0: 7, T1: 8})
    plain_commit(h, {T0: 3})
    end_txn(h, commit=True)
    restarted = h.restart()
    assert offset(restarted, T0) == 3  # written after the transaction's record
    assert offset(restarted, T1) == 8  # written before it


def test_a_tombstone_written_during_the_transaction_does_not_stop_its_commit(h: Harness) -> None:
    plain_commit(h, {T0: 3})
    txn_commit(h, {T0: 7})
    h.coordinator.delete_offsets(group_id="g", partitions=[T0])
    end_txn(h, commit=True)
    assert offset(h, T0) == 7
    assert offset(h.restart(), T0) == 7


def test_a_marker_written_while_the_partition_is_loading_is_found_by_the_replay(h: Harness) -> None:
    txn_commit(h, {T0: 7})
    h.coordinator.shutdown()
    coordinator = GroupCoordinator(h.config, h.topic, h.scheduler)
    coordinator.startup()  # loading waits for the scheduler's next turn
    partition = coordinator.partition_for("g")
    h.topic.write_marker(partition, PID, commit=True)
    coordinator.complete_transactional_offsets(offsets_partition=partition, producer_id=PID, commit=True)
    h.scheduler.advance(0)
    assert coordinator.fetch_offsets(group_id="g", partitions=[T0]).offsets[T0].offset == 7


def test_an_unreadable_marker_is_skipped_and_its_transaction_stays_pending(h: Harness) -> None:
    txn_commit(h, {T0: 7})
    partition = h.coordinator.partition_for("g")
    base = sum(len(b.records) for b in h.topic.read_batches(partition))
    h.topic.batches[partition].append(
        build_batch([Record(base, 0, b"\x00", b"\x00")], base_offset=base, producer_id=PID, producer_epoch=0,
                    is_transactional=True, is_control=True)
    )
    loaded = replay(h.topic.read_batches(partition))
    assert loaded.skipped == 1 and loaded.open_transactions == {PID}
    assert loaded.groups["g"].offsets == {} and set(loaded.groups["g"].pending_txn_offsets[PID]) == {T0}


# --- expiry and deletion ------------------------------------------------------------------


def test_expiry_keeps_a_group_whose_only_offsets_belong_to_an_open_transaction() -> None:
    h = Harness(offsets_retention_ms=HOUR, offsets_retention_check_interval_ms=HOUR)
    plain_commit(h, {T0: 3})
    txn_commit(h, {T1: 8})
    h.scheduler.advance(2 * HOUR)
    assert offset(h, T0) == -1  # committed offsets still expire
    assert h.group() is not None
    end_txn(h, commit=True)
    assert offset(h, T1) == 8


def test_an_empty_group_left_with_nothing_after_an_abort_is_removed_by_expiry() -> None:
    h = Harness(offsets_retention_ms=HOUR, offsets_retention_check_interval_ms=HOUR)
    txn_commit(h, {T1: 8})
    h.scheduler.advance(HOUR)
    end_txn(h, commit=False)
    h.scheduler.advance(HOUR)
    assert h.group() is None


def test_a_group_with_an_open_transaction_cannot_be_deleted_until_it_ends(h: Harness) -> None:
    txn_commit(h, {T0: 7})
    assert h.coordinator.delete_groups(["g"]) == {"g": E.NON_EMPTY_GROUP}
    end_txn(h, commit=True)
    assert h.coordinator.delete_groups(["g"]) == {"g": E.NONE}
    assert h.group() is None


def test_a_group_whose_members_left_keeps_its_open_transaction(h: Harness) -> None:
    member = h.form_group(1)[0].member_id
    txn_commit(h, {T0: 7}, member_id=member, generation_id=1)
    h.coordinator.leave_group(group_id="g", members=[MemberIdentity(member)])
    assert h.group().state is S.EMPTY
    end_txn(h, commit=True)
    assert offset(h, T0) == 7


# --- the log decides ----------------------------------------------------------------------

_PARTITIONS = st.sampled_from([T0, T1])
_PRODUCERS = st.sampled_from([PID, OTHER_PID])
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("plain"), _PARTITIONS, st.integers(0, 1000)),
        st.tuples(st.just("txn"), _PRODUCERS, _PARTITIONS, st.integers(0, 1000)),
        st.tuples(st.just("end"), _PRODUCERS, st.booleans()),
    ),
    max_size=25,
)


@settings(max_examples=100, deadline=None)
@given(steps=_STEPS)
def test_live_offsets_match_the_newest_write_among_plain_and_committed_and_a_restart_agrees(steps) -> None:
    h = Harness()
    position = 0
    committed: dict[TopicPartition, tuple[int, int]] = {}  # partition -> (offset, write position)
    pending: dict[int, dict[TopicPartition, tuple[int, int]]] = {}
    for step in steps:
        position += 1
        if step[0] == "plain":
            _, tp, value = step
            plain_commit(h, {tp: value})
            committed[tp] = (value, position)
        elif step[0] == "txn":
            _, producer_id, tp, value = step
            txn_commit(h, {tp: value}, producer_id=producer_id)
            pending.setdefault(producer_id, {})[tp] = (value, position)
        else:
            _, producer_id, commit = step
            end_txn(h, commit=commit, producer_id=producer_id)
            for tp, written in pending.pop(producer_id, {}).items():
                if commit and (tp not in committed or committed[tp][1] < written[1]):
                    committed[tp] = written
    def expected() -> dict[TopicPartition, int]:
        return {tp: committed[tp][0] if tp in committed else -1 for tp in (T0, T1)}

    assert {tp: offset(h, tp) for tp in (T0, T1)} == expected()
    restarted = h.restart()
    assert {tp: offset(restarted, tp) for tp in (T0, T1)} == expected()
    # Transactions still open end the same way on the restarted coordinator.
    for producer_id, written_offsets in pending.items():
        end_txn(restarted, commit=True, producer_id=producer_id)
        for tp, written in written_offsets.items():
            if tp not in committed or committed[tp][1] < written[1]:
                committed[tp] = written
    assert {tp: offset(restarted, tp) for tp in (T0, T1)} == expected()
