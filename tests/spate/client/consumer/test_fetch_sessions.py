"""The consumer fetches in incremental fetch sessions (KIP-227), one per broker, against scripted brokers.

The first Fetch to a broker names every partition and asks for a session;
later ones carry the session and the next epoch and name only partitions
whose position changed or that joined, listing as forgotten those no longer
fetched (paused, unassigned, moved to another leader). A lost connection or
a session error starts over with a full fetch; a broker without room (session
0) and a broker without sessions (Fetch below v7) get full fetches throughout.
Closing the consumer closes each session on its broker: a Fetch naming it at
the final epoch, without partitions and without waiting, to every broker at
once; a broker that is gone or does not answer does not hold the close up.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Callable

import pytest

from spate.client import Consumer, TopicPartition
from spate.protocol import ADVERTISED_VERSIONS, ApiKey, ErrorCode, VersionRange
from tests.spate.client.consumer.session_brokers import ScriptedCluster, SeenFetch

TOPIC = "quiet"
PARTITIONS = 4
ALL = {(TOPIC, p) for p in range(PARTITIONS)}


def tp(partition: int) -> TopicPartition:
    return TopicPartition(TOPIC, partition)


@pytest.fixture
def cluster() -> Iterator[ScriptedCluster]:
    scripted = ScriptedCluster(TOPIC, PARTITIONS)
    yield scripted
    scripted.stop()


def reading(cluster: ScriptedCluster, partitions: int = PARTITIONS) -> Consumer:
    consumer = Consumer(cluster.bootstrap, fetch_max_wait_ms=20, retry_backoff_ms=20, retry_backoff_max_ms=50,
                        metadata_max_age_ms=60_000)
    consumer.assign([tp(p) for p in range(partitions)])
    for p in range(partitions):
        consumer.seek(tp(p), 0)
    return consumer


def poll_until(consumer: Consumer, done: Callable[[], bool], seconds: float = 10.0) -> list:
    records: list = []
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "timed out"
        records += consumer.poll(timeout_ms=20)
    return records


def fetches_after(cluster: ScriptedCluster, consumer: Consumer, mark: int, count: int,
                  node: int | None = None) -> list[SeenFetch]:
    """Poll until ``count`` fetches came in after the first ``mark``; those fetches."""
    poll_until(consumer, lambda: len(cluster.fetches_since(mark, node)) >= count)
    return cluster.fetches_since(mark, node)[:count]


def first_change(fetches: list[SeenFetch]) -> SeenFetch:
    """The first fetch that names or forgets a partition (one already on its way may come before)."""
    return next(f for f in fetches if f.named or f.forgotten)


def first_full(fetches: list[SeenFetch]) -> int:
    return next(i for i, f in enumerate(fetches) if f.full)


def test_the_first_fetch_is_full_and_opens_a_session_then_idle_fetches_name_nothing(cluster) -> None:
    with reading(cluster) as consumer:
        first, second, third = fetches_after(cluster, consumer, 0, 3)
    assert (first.session_id, first.epoch, set(first.named)) == (0, 0, ALL)
    assert (second.session_id, second.epoch, second.named, second.forgotten) == (100, 1, {}, frozenset())
    assert (third.session_id, third.epoch, third.named) == (100, 2, {})


def test_records_are_read_exactly_and_only_the_partitions_that_moved_are_named_again(cluster) -> None:
    with reading(cluster) as consumer:
        fetches_after(cluster, consumer, 0, 2)
        cluster.append(2, b"a", b"b", b"c")
        records = poll_until(consumer, lambda: consumer.position(tp(2)) == 3)
        mark = len(cluster.fetches)
        idle = fetches_after(cluster, consumer, mark, 2)
        cluster.append(2, b"d")
        records += poll_until(consumer, lambda: consumer.position(tp(2)) == 4)
    assert [(r.partition, r.offset, r.value) for r in records] == [(2, 0, b"a"), (2, 1, b"b"), (2, 2, b"c"),
                                                                    (2, 3, b"d")]
    named = [f.named for f in cluster.fetches if f.named and not f.full]
    assert named and all(n == {(TOPIC, 2): 3} or n == {(TOPIC, 2): 4} for n in named)
    assert all(not f.full for f in idle) and any(not f.named for f in idle)
    assert sum(f.full for f in cluster.fetches) == 1


def test_a_seek_names_the_partition_at_its_new_offset(cluster) -> None:
    cluster.append(1, b"x", b"y", b"z")
    with reading(cluster) as consumer:
        poll_until(consumer, lambda: consumer.position(tp(1)) == 3)
        consumer.seek(tp(1), 1)
        mark = len(cluster.fetches)
        records = poll_until(consumer, lambda: consumer.position(tp(1)) == 3)
    assert [r.value for r in records] == [b"y", b"z"]
    # (A fetch sent before the seek may still name the partition at 3, where the read left it.)
    assert {(TOPIC, 1): 1} in [f.named for f in cluster.fetches_since(mark)]
    assert sum(f.full for f in cluster.fetches) == 1


def test_a_paused_partition_is_forgotten_and_named_again_when_resumed(cluster) -> None:
    with reading(cluster) as consumer:
        fetches_after(cluster, consumer, 0, 2)
        consumer.pause(tp(0))
        mark = len(cluster.fetches)
        paused = fetches_after(cluster, consumer, mark, 3)
        cluster.append(0, b"while-paused")
        time.sleep(0.1)
        assert consumer.poll(timeout_ms=100) == []
        consumer.resume(tp(0))
        mark = len(cluster.fetches)
        records = poll_until(consumer, lambda: consumer.position(tp(0)) == 1)
    assert [(f.named, f.forgotten) for f in paused if f.named or f.forgotten] == [({}, {(TOPIC, 0)})]
    assert first_change(cluster.fetches_since(mark)).named == {(TOPIC, 0): 0}
    assert [r.value for r in records] == [b"while-paused"]
    assert sum(f.full for f in cluster.fetches) == 1


def test_partitions_no_longer_assigned_are_forgotten_and_new_ones_join(cluster) -> None:
    with reading(cluster, partitions=2) as consumer:
        fetches_after(cluster, consumer, 0, 2)
        consumer.assign([tp(1), tp(3)])
        consumer.seek(tp(3), 0)
        mark = len(cluster.fetches)
        changed = first_change(fetches_after(cluster, consumer, mark, 2))
    assert (changed.named, changed.forgotten, changed.full) == ({(TOPIC, 3): 0}, {(TOPIC, 0)}, False)


def test_a_partition_whose_leader_moves_leaves_one_session_and_joins_the_other() -> None:
    cluster = ScriptedCluster(TOPIC, PARTITIONS, nodes=2)
    try:
        cluster.append(3, b"before")
        with reading(cluster) as consumer:
            records = poll_until(consumer, lambda: consumer.position(tp(3)) == 1)
            moved = len(cluster.fetches)
            cluster.move_leader(3, 1)
            cluster.append(3, b"after")
            records += poll_until(consumer, lambda: consumer.position(tp(3)) == 2)
            fetches_after(cluster, consumer, len(cluster.fetches), 2, node=0)
            sessions = cluster.open_sessions()
    finally:
        cluster.stop()
    assert [r.value for r in records] == [b"before", b"after"]
    to_new = [f for f in cluster.fetches if f.node == 1]
    assert to_new[0].full and to_new[0].named == {(TOPIC, 3): 1}
    old_session, new_session = (next(f.session_id for f in cluster.fetches if f.node == n and not f.full)
                                for n in (0, 1))
    assert sessions[old_session] == ALL - {(TOPIC, 3)}
    assert sessions[new_session] == {(TOPIC, 3)}
    assert not any(f.full for f in cluster.fetches_since(moved, node=0))


def test_a_lost_connection_closes_the_session_with_the_next_full_fetch(cluster) -> None:
    with reading(cluster) as consumer:
        fetches_after(cluster, consumer, 0, 2)
        mark = len(cluster.fetches)
        cluster.close_next_fetch = True
        poll_until(consumer, lambda: any(f.full for f in cluster.fetches_since(mark)))
        fetches = fetches_after(cluster, consumer, mark, first_full(cluster.fetches_since(mark)) + 2)
        again = fetches[first_full(fetches):]
    assert again[0].full and (again[0].session_id, again[0].epoch) == (100, 0) and set(again[0].named) == ALL
    assert (again[1].session_id, again[1].epoch, again[1].named) == (101, 1, {})


@pytest.mark.parametrize("error", [ErrorCode.FETCH_SESSION_ID_NOT_FOUND, ErrorCode.INVALID_FETCH_SESSION_EPOCH])
def test_a_session_error_starts_over_with_a_full_fetch(cluster, error) -> None:
    cluster.append(0, b"kept")
    with reading(cluster) as consumer:
        records = poll_until(consumer, lambda: consumer.position(tp(0)) == 1)
        mark = len(cluster.fetches)
        cluster.session_errors.append(error)
        poll_until(consumer, lambda: any(f.full for f in cluster.fetches_since(mark)))
        fetches = cluster.fetches_since(mark)
        refused, again = fetches[first_full(fetches) - 1: first_full(fetches) + 1]
        cluster.append(0, b"after")
        records += poll_until(consumer, lambda: consumer.position(tp(0)) == 2)
    assert not refused.full and again.full and set(again.named) == ALL
    assert again.session_id == (0 if error == ErrorCode.FETCH_SESSION_ID_NOT_FOUND else refused.session_id)
    assert [r.value for r in records] == [b"kept", b"after"]


def test_a_broker_without_room_for_a_session_gets_full_fetches(cluster) -> None:
    cluster.refuse_sessions = True
    with reading(cluster) as consumer:
        fetches = fetches_after(cluster, consumer, 0, 3)
    assert all(f.full and (f.session_id, f.epoch) == (0, 0) and set(f.named) == ALL for f in fetches)
    assert cluster.closes == []  # no session, nothing to close


def test_a_broker_without_fetch_sessions_gets_full_fetches_below_v7() -> None:
    versions = {**ADVERTISED_VERSIONS, ApiKey.FETCH: VersionRange(4, 6)}
    cluster = ScriptedCluster(TOPIC, PARTITIONS, versions=versions)
    try:
        cluster.append(1, b"old")
        with reading(cluster) as consumer:
            records = poll_until(consumer, lambda: consumer.position(tp(1)) == 1)
            fetches = fetches_after(cluster, consumer, 0, 3)
    finally:
        cluster.stop()
    assert [r.value for r in records] == [b"old"]
    assert all(f.version == 6 and f.full and set(f.named) == ALL for f in fetches)


@pytest.fixture
def two_brokers() -> Iterator[ScriptedCluster]:
    """Partitions 0 and 2 led by node 0, 1 and 3 by node 1."""
    scripted = ScriptedCluster(TOPIC, PARTITIONS, nodes=2)
    scripted.move_leader(1, 1)
    scripted.move_leader(3, 1)
    yield scripted
    scripted.stop()


def in_sessions_on_both(cluster: ScriptedCluster, consumer: Consumer) -> dict[int, int]:
    """Poll until both brokers served an incremental fetch; the session id by node."""
    for node in (0, 1):
        poll_until(consumer, lambda: any(not f.full for f in cluster.fetches_since(0, node)))
    return {node: next(f.session_id for f in cluster.fetches_since(0, node) if not f.full) for node in (0, 1)}


def test_close_sends_each_broker_a_final_fetch_for_its_session_without_partitions_or_wait(two_brokers) -> None:
    consumer = reading(two_brokers)
    sessions = in_sessions_on_both(two_brokers, consumer)
    consumer.close()
    closes = sorted(two_brokers.closes, key=lambda f: f.node)
    assert [(f.node, f.session_id, f.epoch) for f in closes] == [(0, sessions[0], -1), (1, sessions[1], -1)]
    assert all(f.named == {} and f.forgotten == frozenset() and f.max_wait_ms == 0 for f in closes)
    assert two_brokers.open_sessions() == {}


def test_close_skips_a_broker_that_is_gone_and_closes_the_other_sessions(two_brokers) -> None:
    consumer = reading(two_brokers)
    sessions = in_sessions_on_both(two_brokers, consumer)
    two_brokers.brokers[1].stop()
    started = time.monotonic()
    consumer.close()
    assert time.monotonic() - started < 5
    assert [(f.node, f.session_id) for f in two_brokers.closes] == [(0, sessions[0])]
    assert sessions[0] not in two_brokers.open_sessions()


def test_close_waits_for_an_unanswered_final_fetch_no_longer_than_its_timeout(two_brokers) -> None:
    two_brokers.silent_closes.add(1)
    consumer = reading(two_brokers)
    sessions = in_sessions_on_both(two_brokers, consumer)
    started = time.monotonic()
    consumer.close(timeout_ms=300)
    assert time.monotonic() - started < 3
    assert sorted((f.node, f.session_id) for f in two_brokers.closes) == [(0, sessions[0]), (1, sessions[1])]
    assert list(two_brokers.open_sessions()) == [sessions[1]]
