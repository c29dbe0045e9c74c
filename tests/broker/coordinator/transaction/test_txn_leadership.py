"""The transaction coordinator follows the leadership of its ``__transaction_state`` partitions.

Two coordinators share the stored partitions and one clock, as two brokers
share a partition's replicated log; each has its own markers. A transaction
in flight while its partition moves ends whole: prepared ones are completed
by the new coordinator, ongoing ones carry on there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from broker_core.coordinator.group.results import OffsetCommitEntry
from broker_core.coordinator.transaction import MarkerOutcome, MarkerRequest, MarkersDone, TxnState
from broker_core.coordinator.transaction.txn_config import MARKER_RETRY_BACKOFF_MS
from spate.protocol.errors import ErrorCode
from spate.structs import TopicPartition
from tests.broker.coordinator.group.group_harness import Harness
from tests.broker.coordinator.transaction.txn_harness import TIMEOUT_MS, RecordingMarkers, TxnHarness, tp

E = ErrorCode
S = TxnState


def follower(leader: TxnHarness, markers: RecordingMarkers | None = None) -> TxnHarness:
    """A coordinator on another broker: it leads no partition of the topic yet."""
    return TxnHarness(leader.topic.view(led=set()), leader.scheduler, markers)


def move(old: TxnHarness, new: TxnHarness, epoch: int, transactional_id: str = "txn-1") -> int:
    """The id's partition moves from ``old`` to ``new`` at ``epoch``; returns the partition."""
    partition = old.coordinator.partition_for(transactional_id)
    old.coordinator.on_resigned(partition, epoch)
    new.coordinator.on_elected(partition, epoch)
    new.scheduler.advance(0)
    return partition


def test_an_elected_partition_loads_on_a_later_turn_and_answers_load_in_progress_meanwhile() -> None:
    first = TxnHarness()
    producer = first.init()
    second = follower(first)
    partition = second.coordinator.partition_for("txn-1")
    assert second.coordinator.init_producer_id("txn-1", TIMEOUT_MS).error is E.NOT_COORDINATOR
    second.coordinator.on_elected(partition, 1)
    assert second.coordinator.init_producer_id("txn-1", TIMEOUT_MS).error is E.COORDINATOR_LOAD_IN_PROGRESS
    second.scheduler.advance(0)
    assert second.init() == (producer[0], producer[1] + 1)


def test_resigning_drops_the_ids_and_answers_not_coordinator() -> None:
    h = TxnHarness()
    producer = h.init()
    h.add(producer, tp("orders", 0))
    h.coordinator.on_resigned(h.coordinator.partition_for("txn-1"), 1)
    assert h.coordinator.describe("txn-1") is None
    assert h.add(producer, tp("orders", 1)) is E.NOT_COORDINATOR
    assert h.end(producer, commit=True) is E.NOT_COORDINATOR
    # Its timeout passes here without an abort: the transaction is no longer this coordinator's.
    h.scheduler.advance(2 * TIMEOUT_MS)
    assert h.markers.written == []


def test_a_prepared_commit_is_completed_by_the_new_coordinator_with_its_epoch() -> None:
    first = TxnHarness()
    producer = first.init()
    first.add(producer, tp("orders", 0), tp("payments", 1))
    first.markers.unavailable = {tp("payments", 1)}
    assert first.end(producer, commit=True) is E.NONE
    first.scheduler.advance(0)
    assert first.state() is S.PREPARE_COMMIT
    second = follower(first)
    move(first, second, 1)
    # The old coordinator stops retrying; the new one writes every marker again, then CompleteCommit.
    first.markers.unavailable = set()
    first.scheduler.advance(10 * MARKER_RETRY_BACKOFF_MS)
    assert [t for t, _ in first.markers.written] == [tp("orders", 0)]
    assert second.state() is S.COMPLETE_COMMIT
    markers = second.markers.for_producer(producer[0])
    assert set(markers) == {tp("orders", 0), tp("payments", 1)}
    assert all(m.commit and m.coordinator_epoch == 1 and m.producer_epoch == producer[1] for m in markers.values())
    assert second.add(producer, tp("orders", 1)) is E.NONE


def test_a_prepared_abort_is_completed_by_the_new_coordinator() -> None:
    first = TxnHarness()
    old = first.init()
    first.add(old, tp("orders", 0))
    first.markers.unavailable = {tp("orders", 0)}
    assert first.coordinator.init_producer_id("txn-1", TIMEOUT_MS).error is E.CONCURRENT_TRANSACTIONS
    second = follower(first)
    move(first, second, 3)
    assert second.state() is S.COMPLETE_ABORT
    marker = second.markers.for_producer(old[0])[tp("orders", 0)]
    assert not marker.commit and marker.producer_epoch == old[1] + 1 and marker.coordinator_epoch == 3
    assert second.init() == (old[0], old[1] + 2)


def test_an_ongoing_transaction_continues_on_the_new_coordinator() -> None:
    first = TxnHarness()
    producer = first.init()
    first.add(producer, tp("orders", 0))
    second = follower(first)
    move(first, second, 1)
    assert second.state() is S.ONGOING
    assert second.add(producer, tp("payments", 0)) is E.NONE
    assert second.end(producer, commit=True) is E.NONE
    second.scheduler.advance(0)
    assert second.state() is S.COMPLETE_COMMIT
    assert set(second.markers.for_producer(producer[0])) == {tp("orders", 0), tp("payments", 0)}
    assert first.markers.written == []


def test_an_ongoing_transaction_left_alone_times_out_on_the_new_coordinator() -> None:
    first = TxnHarness()
    producer = first.init(timeout_ms=5_000)
    first.add(producer, tp("orders", 2))
    second = follower(first)
    move(first, second, 1)
    second.scheduler.advance(7_000)
    assert second.state() is S.COMPLETE_ABORT
    assert not second.markers.for_producer(producer[0])[tp("orders", 2)].commit
    assert first.markers.written == []


@dataclass
class HeldMarkers:
    """Markers whose answer comes later, as from other brokers: ``release`` answers them all written."""

    held: list[tuple[MarkerRequest, list[TopicPartition], MarkersDone]] = field(default_factory=list)

    def write_markers(self, request: MarkerRequest, partitions: Iterable[TopicPartition], done: MarkersDone) -> None:
        self.held.append((request, list(partitions), done))

    def release(self) -> None:
        held, self.held = self.held, []
        for _, partitions, done in held:
            done(MarkerOutcome(written=set(partitions)))


def test_an_answer_to_markers_arriving_after_the_move_completes_nothing() -> None:
    held = HeldMarkers()
    first = TxnHarness(markers=held)
    producer = first.init()
    first.add(producer, tp("orders", 0))
    first.end(producer, commit=True)
    first.scheduler.advance(0)
    assert len(held.held) == 1
    second = follower(first)
    move(first, second, 1)
    assert second.state() is S.COMPLETE_COMMIT
    records = len(first.topic.records())
    held.release()
    first.scheduler.advance(10 * MARKER_RETRY_BACKOFF_MS)
    assert len(first.topic.records()) == records  # the old coordinator wrote no CompleteCommit
    assert first.coordinator.describe("txn-1") is None


def test_markers_answered_later_complete_the_transaction_then() -> None:
    held = HeldMarkers()
    h = TxnHarness(markers=held)
    producer = h.init()
    h.add(producer, tp("orders", 0))
    h.end(producer, commit=True)
    h.scheduler.advance(0)
    assert h.state() is S.PREPARE_COMMIT
    assert h.add(producer, tp("orders", 1)) is E.CONCURRENT_TRANSACTIONS
    held.release()
    assert h.state() is S.COMPLETE_COMMIT


def test_a_load_overtaken_by_a_newer_election_runs_once_at_the_newer_epoch() -> None:
    first = TxnHarness()
    producer = first.init()
    second = follower(first)
    partition = second.coordinator.partition_for("txn-1")
    second.topic.loads.clear()
    second.coordinator.on_elected(partition, 1)
    second.coordinator.on_elected(partition, 2)
    second.scheduler.advance(0)
    assert second.topic.loads == [partition]
    second.add(producer, tp("orders", 0))
    second.end(producer, commit=True)
    second.scheduler.advance(0)
    assert second.markers.for_producer(producer[0])[tp("orders", 0)].coordinator_epoch == 2


def test_an_older_election_arriving_late_does_not_overwrite_the_newer_load() -> None:
    first = TxnHarness()
    first.init()
    second = follower(first)
    partition = second.coordinator.partition_for("txn-1")
    second.coordinator.on_elected(partition, 4)
    second.scheduler.advance(0)
    producer = second.init()
    second.topic.loads.clear()
    second.coordinator.on_elected(partition, 3)
    second.scheduler.advance(0)
    assert second.topic.loads == []
    assert second.add(producer, tp("orders", 0)) is E.NONE
    second.end(producer, commit=False)
    second.scheduler.advance(0)
    assert second.markers.for_producer(producer[0])[tp("orders", 0)].coordinator_epoch == 4


def test_a_load_pending_when_the_partition_moves_away_is_dropped() -> None:
    first = TxnHarness()
    first.init()
    second = follower(first)
    partition = second.coordinator.partition_for("txn-1")
    second.topic.loads.clear()
    second.coordinator.on_elected(partition, 1)
    second.coordinator.on_resigned(partition, 2)
    second.scheduler.advance(0)
    assert second.topic.loads == []
    assert second.coordinator.describe("txn-1") is None


def test_a_newer_epoch_of_a_loaded_partition_reloads_it_and_resends_prepared_markers() -> None:
    h = TxnHarness()
    producer = h.init()
    h.add(producer, tp("orders", 0))
    h.markers.unavailable = {tp("orders", 0)}
    h.end(producer, commit=True)
    h.scheduler.advance(0)
    h.markers.unavailable = set()
    h.coordinator.on_elected(h.coordinator.partition_for("txn-1"), 7)
    assert h.coordinator.init_producer_id("txn-1", TIMEOUT_MS).error is E.COORDINATOR_LOAD_IN_PROGRESS
    h.scheduler.advance(0)
    assert h.state() is S.COMPLETE_COMMIT
    assert h.markers.for_producer(producer[0])[tp("orders", 0)].coordinator_epoch == 7


def test_a_resignation_older_than_the_current_election_is_ignored() -> None:
    h = TxnHarness()
    partition = h.coordinator.partition_for("txn-1")
    h.coordinator.on_elected(partition, 5)
    h.scheduler.advance(0)
    producer = h.init()
    h.coordinator.on_resigned(partition, 4)
    assert h.add(producer, tp("orders", 0)) is E.NONE


# --- TxnOffsetCommit for a transactional id coordinated elsewhere ---------------------------


def test_offset_commit_for_an_id_coordinated_elsewhere_is_accepted_unchecked() -> None:
    first = TxnHarness()
    first.init()
    elsewhere = follower(first)
    assert elsewhere.coordinator.verify_offset_commit("txn-1", 1234, 0, "copier") is E.NONE


def test_offset_commit_for_a_local_id_is_still_checked() -> None:
    h = TxnHarness()
    producer = h.init()
    assert h.coordinator.verify_offset_commit("txn-1", *producer, "copier") is E.INVALID_TXN_STATE
    assert h.coordinator.verify_offset_commit("txn-1", producer[0], producer[1] + 1, "copier") is E.PRODUCER_FENCED


def test_offset_commit_while_the_local_id_loads_is_told_to_retry() -> None:
    first = TxnHarness()
    first.init()
    second = follower(first)
    second.coordinator.on_elected(second.coordinator.partition_for("txn-1"), 1)
    assert second.coordinator.verify_offset_commit("txn-1", 1, 0, "copier") is E.COORDINATOR_LOAD_IN_PROGRESS


def test_txn_offset_commit_with_a_transactional_id_of_another_broker_is_stored_pending() -> None:
    first = TxnHarness()
    first.init()
    elsewhere = follower(first)
    groups = Harness(txn_verifier=elsewhere.coordinator.verify_offset_commit)
    t0 = TopicPartition("orders", 0)
    errors = groups.coordinator.handle_txn_offset_commit(
        transactional_id="txn-1", group_id="g", producer_id=4321, producer_epoch=0, offsets={t0: OffsetCommitEntry(9)}
    )
    assert errors == {t0: E.NONE}
    assert groups.group().pending_txn_offsets[4321][t0].offset == 9
    groups.coordinator.complete_transactional_offsets(
        offsets_partition=groups.coordinator.partition_for("g"), producer_id=4321, commit=True
    )
    assert groups.coordinator.fetch_offsets(group_id="g", partitions=[t0]).offsets[t0].offset == 9
