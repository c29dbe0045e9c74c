"""LeaderAndIsr, StopReplica and UpdateMetadata applied to a real replica manager: Kafka's fencing rules."""

from __future__ import annotations

import asyncio
import gc
import time
import uuid
from pathlib import Path
from typing import Any, Awaitable

import pytest

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.topic_config import to_log_config_kwargs
from broker_core.server import replica_manager
from broker_core.server.metadata_cache import MetadataCache
from broker_core.server.purgatory import FetchPurgatory
from broker_core.server.replica_manager import ReplicaManager
from broker_core.server.replica_state_changes import ReplicaStateChanges
from broker_core.storage.config import LogConfig
from broker_core.storage.errors import LogDirError
from broker_core.storage.log_manager import LogManager
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.leader_and_isr import LeaderAndIsrRequest
from spate.records import Record, build_batch
from spate.structs import TopicPartition
from tests.support.controller_requests import Broker, FakeController, PartitionSpec

E = ErrorCode
ME = 1
T0 = TopicPartition("t", 0)


class Listener:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def on_become_leader(self, topic: str, partition: int, leader_epoch: int) -> None:
        self.calls.append(("leader", topic, partition, leader_epoch))

    def on_become_follower(self, topic: str, partition: int, leader_epoch: int) -> None:
        self.calls.append(("follower", topic, partition, leader_epoch))

    def on_stop_replica(self, topic: str, partition: int) -> None:
        self.calls.append(("stopped", topic, partition))


class Harness:
    def __init__(self, data_dir: Path) -> None:
        config = BrokerConfig.from_properties({"broker.id": str(ME), "log.dirs": str(data_dir)})
        self.log_manager = LogManager([data_dir], LogConfig(**to_log_config_kwargs(config)), clock=lambda: 0)
        self.replicas = ReplicaManager(node_id=ME, log_manager=self.log_manager, broker_config=config,
                                       clock=lambda: 0, purgatory=FetchPurgatory())
        self.cache = MetadataCache(cluster_id="c", listener_name="PLAINTEXT")
        self.configs_read: list[list[str]] = []
        self.broker_epoch = 50
        self.listener = Listener()
        self.replicas.add_leadership_listener(self.listener)
        self.changes = ReplicaStateChanges(node_id=ME, replicas=self.replicas, cache=self.cache,
                                           topic_configs=self._configs, broker_epoch=lambda: self.broker_epoch)
        self.controller = FakeController(epoch=3)

    def _configs(self, topics) -> dict[str, dict[str, str]]:
        self.configs_read.append(list(topics))
        return {topic: {"retention.ms": "12345"} for topic in topics}

    def lead(self, *specs: PartitionSpec, **kwargs: Any):
        return asyncio.run(self.changes.become_leader_or_follower(self.controller.leader_and_isr(specs, **kwargs)))

    def stop(self, *entries: tuple[str, int, int, bool], **kwargs: Any):
        return asyncio.run(self.changes.stop_replicas(self.controller.stop_replica(entries, **kwargs)))

    def update(self, *specs: PartitionSpec, **kwargs: Any):
        body = self.controller.update_metadata([Broker(ME, "h", 1)], specs, **kwargs)
        return asyncio.run(self.changes.update_metadata(body))


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    return Harness(tmp_path)


def test_a_partition_led_here_is_opened_with_its_topic_configs_and_announced(h: Harness) -> None:
    outcome = h.lead(PartitionSpec("t", 0, ME, leader_epoch=2, replicas=(ME,)))
    assert (outcome.error, outcome.partitions) == (E.NONE, {T0: E.NONE})
    partition = h.replicas.get("t", 0)
    assert partition is not None and partition.leader_epoch == 2
    assert partition.log.config.retention_ms == 12345
    assert h.configs_read == [["t"]]
    assert h.listener.calls == [("leader", "t", 0, 2)]


def test_a_partition_led_elsewhere_is_followed_and_keeps_its_log(h: Harness) -> None:
    h.lead(PartitionSpec("t", 0, ME, leader_epoch=0, replicas=(ME, 2)))
    h.replicas.get("t", 0).append_records(build_batch([Record(0, 1, None, b"v")]))
    outcome = h.lead(PartitionSpec("t", 0, 2, leader_epoch=1, replicas=(ME, 2)))
    assert outcome.partitions == {T0: E.NONE}
    assert h.replicas.get("t", 0) is None
    assert h.replicas.hosted("t", 0).log_end_offset == 1
    assert h.listener.calls[-1] == ("follower", "t", 0, 1)
    # Leading again reuses the log; no configs are read for a partition already hosted.
    h.lead(PartitionSpec("t", 0, ME, leader_epoch=2, replicas=(ME, 2)))
    assert h.replicas.get("t", 0).log_end_offset == 1
    assert h.configs_read == [["t"]]


def test_an_older_controller_epoch_is_refused_whole(h: Harness) -> None:
    h.lead(PartitionSpec("t", 0, ME, replicas=(ME,)))
    outcome = h.lead(PartitionSpec("t", 1, ME, replicas=(ME,)), epoch=2)
    assert outcome.error == E.STALE_CONTROLLER_EPOCH
    assert outcome.partitions == {TopicPartition("t", 1): E.STALE_CONTROLLER_EPOCH}
    assert h.replicas.get("t", 1) is None
    assert h.stop(("t", 0, -2, True), epoch=2).error == E.STALE_CONTROLLER_EPOCH
    assert h.update(epoch=2).error == E.STALE_CONTROLLER_EPOCH
    # A newer controller is accepted and becomes the bar.
    assert h.lead(PartitionSpec("t", 1, ME, replicas=(ME,)), epoch=4).error == E.NONE
    assert h.changes.controller_epoch == 4


def test_leader_epochs_must_grow_and_replicas_must_include_this_broker(h: Harness) -> None:
    h.lead(PartitionSpec("t", 0, ME, leader_epoch=5, replicas=(ME,)))
    for same_or_older in (5, 4):
        outcome = h.lead(PartitionSpec("t", 0, ME, leader_epoch=same_or_older, replicas=(ME,)))
        assert outcome.partitions == {T0: E.STALE_CONTROLLER_EPOCH}
    elsewhere = h.lead(PartitionSpec("u", 0, 2, leader_epoch=0, replicas=(2, 3)))
    assert elsewhere.partitions == {TopicPartition("u", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert h.replicas.hosted("u", 0) is None


def test_a_different_topic_id_for_a_hosted_topic_is_inconsistent(h: Harness) -> None:
    h.lead(PartitionSpec("t", 0, ME, replicas=(ME,)))
    h.controller.topic_ids["t"] = uuid.uuid4()
    outcome = h.lead(PartitionSpec("t", 0, ME, leader_epoch=1, replicas=(ME,)))
    assert outcome.partitions == {T0: E.INCONSISTENT_TOPIC_ID}


def test_a_stale_broker_epoch_is_refused_and_minus_one_is_not_checked(h: Harness) -> None:
    assert h.lead(PartitionSpec("t", 0, ME, replicas=(ME,)), broker_epoch=49).error == E.STALE_BROKER_EPOCH
    assert h.update(broker_epoch=49).error == E.STALE_BROKER_EPOCH
    assert h.stop(("t", 0, -1, False), broker_epoch=49).partitions == {T0: E.STALE_BROKER_EPOCH}
    assert h.lead(PartitionSpec("t", 0, ME, replicas=(ME,)), broker_epoch=-1).error == E.NONE
    assert h.lead(PartitionSpec("t", 1, ME, replicas=(ME,)), broker_epoch=50).error == E.NONE


def test_stop_replica_with_delete_removes_the_log_hosted_or_not(h: Harness, tmp_path: Path) -> None:
    h.lead(PartitionSpec("t", 0, ME, leader_epoch=3, replicas=(ME,)))
    h.log_manager.get_or_create_log("t", 1)  # on disk from before a restart, never hosted since
    outcome = h.stop(("t", 0, -2, True), ("t", 1, -2, True))
    assert outcome.partitions == {T0: E.NONE, TopicPartition("t", 1): E.NONE}
    assert h.replicas.hosted("t", 0) is None
    assert h.log_manager.get_log("t", 0) is None and h.log_manager.get_log("t", 1) is None
    assert not (tmp_path / "t-0").exists() and not (tmp_path / "t-1").exists()
    assert ("stopped", "t", 0) in h.listener.calls and ("stopped", "t", 1) in h.listener.calls


def test_stop_replica_without_delete_keeps_the_log_and_fences_older_epochs(h: Harness) -> None:
    h.lead(PartitionSpec("t", 0, ME, leader_epoch=3, replicas=(ME,)))
    assert h.stop(("t", 0, 2, False)).partitions == {T0: E.FENCED_LEADER_EPOCH}
    assert h.replicas.get("t", 0) is not None
    assert h.stop(("t", 0, 3, False)).partitions == {T0: E.NONE}
    assert h.replicas.hosted("t", 0) is None
    assert h.log_manager.get_log("t", 0) is not None


def test_update_metadata_feeds_the_cache_and_reports_deletions(h: Harness) -> None:
    assert h.update(PartitionSpec("t", 0, ME)).error == E.NONE
    assert h.cache.partition_count("t") == 1
    outcome = h.update(*h.controller.deleting("t", [0]))
    assert outcome.deleted == [T0]
    assert h.cache.partition_count("t") is None


def test_partitions_of_a_failed_log_dir_go_offline_and_answer_kafka_storage_error_at_any_epoch(h: Harness) -> None:
    h.lead(PartitionSpec("t", 0, ME, leader_epoch=2, replicas=(ME,)))
    log_dir = h.log_manager.log_dirs[0]
    assert h.replicas.handle_log_dir_failure(log_dir) == [("t", 0)]
    assert h.replicas.hosted("t", 0) is None and h.replicas.is_offline("t", 0)
    assert ("stopped", "t", 0) in h.listener.calls
    # The controller asks again at the same epoch: that is how it learns what the dir took.
    for epoch in (2, 3):
        outcome = h.lead(PartitionSpec("t", 0, ME, leader_epoch=epoch, replicas=(ME,)))
        assert outcome.partitions == {T0: E.KAFKA_STORAGE_ERROR}


def test_a_log_not_found_while_a_log_dir_is_offline_is_not_created_unless_the_partition_is_new(h: Harness) -> None:
    h.log_manager.failures.report(h.log_manager.log_dirs[0], OSError("EIO"))
    outcome = h.lead(PartitionSpec("t", 0, ME, leader_epoch=1, replicas=(ME,)))
    assert outcome.partitions == {T0: E.KAFKA_STORAGE_ERROR}
    assert h.log_manager.get_log("t", 0) is None


# --- many partitions: applied in slices, the event loop free between them -------------------------

MANY = 2000
# Deleting is slower than opening (the log dir's checkpoints are rewritten for each): fewer do.
SOME = 1000
LEADER_ELSEWHERE = 2
# Nobody listens there: the followed partitions' fetcher keeps backing off.
UNREACHABLE_LEADER = LeaderAndIsrRequest.LeaderAndIsrLiveLeader(broker_id=LEADER_ELSEWHERE, host_name="127.0.0.1",
                                                                port=1)
# Far above a slice (20 ms) yet far below what applying thousands of partitions in one go takes.
LONGEST_GAP_S = 0.5


async def longest_gap_while(work: Awaitable[Any]) -> tuple[Any, float, int]:
    """Run ``work`` next to a coroutine that wakes every millisecond: (its result, the longest time that
    coroutine waited for the loop, how often it ran)."""
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(0.001)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    # A full collection of this test process's heap (every earlier test's objects) would show as a gap that
    # is not the change holding the loop.
    gc.disable()
    try:
        result = await work
    finally:
        gc.enable()
        done.set()
        await ticking
    return result, max(gaps, default=0.0), len(gaps)


def many_specs() -> list[PartitionSpec]:
    """Three partitions in four led here, the rest followed from broker 2."""
    return [
        PartitionSpec("many", p, LEADER_ELSEWHERE if p % 4 == 3 else ME, leader_epoch=1,
                      replicas=(ME, LEADER_ELSEWHERE))
        for p in range(MANY)
    ]


def test_thousands_of_new_partitions_are_applied_in_slices_with_the_same_result(h: Harness) -> None:
    body = h.controller.leader_and_isr(many_specs())
    body.live_leaders = [UNREACHABLE_LEADER]

    async def scenario() -> tuple[Any, float, int]:
        try:
            return await longest_gap_while(h.changes.become_leader_or_follower(body))
        finally:
            await h.replicas.shutdown_fetchers()

    started = time.monotonic()
    outcome, gap, ticks = asyncio.run(scenario())
    elapsed = time.monotonic() - started
    assert outcome.error == E.NONE
    assert outcome.partitions == {TopicPartition("many", p): E.NONE for p in range(MANY)}
    assert gap < LONGEST_GAP_S, f"the loop was held for {gap:.3f}s (the whole request took {elapsed:.2f}s)"
    assert ticks >= 5, f"the other coroutine ran only {ticks} time(s) in {elapsed:.2f}s"
    followed = {p for p in range(MANY) if p % 4 == 3}
    assert {p for p in range(MANY) if h.replicas.is_leader("many", p)} == set(range(MANY)) - followed
    assert all(h.replicas.hosted("many", p) is not None for p in range(MANY))
    # Announced once each, after every partition was applied.
    assert sorted(h.listener.calls) == sorted(
        [("leader", "many", p, 1) for p in range(MANY) if p not in followed]
        + [("follower", "many", p, 1) for p in followed]
    )
    assert h.configs_read == [["many"]]


def test_deleting_thousands_of_partitions_is_applied_in_slices(h: Harness) -> None:
    h.lead(*(PartitionSpec("many", p, ME, leader_epoch=1, replicas=(ME,)) for p in range(SOME)))
    body = h.controller.stop_replica([("many", p, -2, True) for p in range(SOME)])
    outcome, gap, _ = asyncio.run(longest_gap_while(h.changes.stop_replicas(body)))
    assert outcome.partitions == {TopicPartition("many", p): E.NONE for p in range(SOME)}
    assert gap < LONGEST_GAP_S, f"the loop was held for {gap:.3f}s"
    assert not list(h.replicas) and not h.log_manager.all_logs()
    assert sorted(c for c in h.listener.calls if c[0] == "stopped") == [("stopped", "many", p) for p in range(SOME)]


def test_a_request_waits_for_the_one_being_applied(h: Harness) -> None:
    first = h.controller.leader_and_isr([PartitionSpec("many", p, ME, replicas=(ME,)) for p in range(SOME)])
    second = h.controller.leader_and_isr([PartitionSpec("many", p, ME, leader_epoch=1, replicas=(ME,))
                                          for p in range(SOME)])

    async def both() -> tuple[Any, Any]:
        return await asyncio.gather(h.changes.become_leader_or_follower(first),
                                    h.changes.become_leader_or_follower(second))

    one, two = asyncio.run(both())
    assert set(one.partitions.values()) == set(two.partitions.values()) == {E.NONE}
    assert all(h.replicas.leader_epoch("many", p) == 1 for p in range(SOME))
    # Every announcement of the first request comes before any of the second.
    epochs = [call[3] for call in h.listener.calls]
    assert epochs == [0] * SOME + [1] * SOME


# --- a partition whose opening fails -----------------------------------------------------------------


def test_a_partition_that_fails_to_open_answers_its_error_and_leaves_nothing_behind(
    h: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_unified_log = replica_manager.UnifiedLog
    real_get_or_create = h.log_manager.get_or_create_log

    def unified_log(local_log, **kwargs):
        if local_log.directory.name == "t-1":  # its log exists by now: the failure comes half-way
            raise LogDirError(tmp_path, "cannot load the producer state: Too many open files")
        return real_unified_log(local_log, **kwargs)

    def get_or_create_log(topic, partition, *args, **kwargs):
        if (topic, partition) == ("t", 2):
            raise LogDirError(tmp_path, "cannot open the segment: Too many open files")
        return real_get_or_create(topic, partition, *args, **kwargs)

    monkeypatch.setattr(replica_manager, "UnifiedLog", unified_log)
    monkeypatch.setattr(h.log_manager, "get_or_create_log", get_or_create_log)
    specs = [PartitionSpec("t", p, ME, leader_epoch=1, replicas=(ME,)) for p in range(4)]
    outcome = h.lead(*specs)
    tp = [TopicPartition("t", p) for p in range(4)]
    assert outcome.partitions == {tp[0]: E.NONE, tp[1]: E.KAFKA_STORAGE_ERROR, tp[2]: E.KAFKA_STORAGE_ERROR,
                                  tp[3]: E.NONE}
    for failed in (1, 2):
        assert h.replicas.hosted("t", failed) is None
        assert h.log_manager.get_log("t", failed) is None
        assert not (tmp_path / f"t-{failed}").exists()
    assert h.listener.calls == [("leader", "t", 0, 1), ("leader", "t", 3, 1)]
    # Nothing half-open is in the way: the controller's next attempt opens them.
    monkeypatch.undo()
    assert h.lead(*specs[1:3]).partitions == {tp[1]: E.NONE, tp[2]: E.NONE}
    assert h.replicas.is_leader("t", 1) and h.replicas.is_leader("t", 2)


def test_a_failure_after_opening_a_followed_partition_closes_it_again(
    h: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args, **kwargs):
        raise LogDirError(h.log_manager.log_dirs[0], "cannot read the high watermark checkpoint")

    monkeypatch.setattr(h.replicas.fetchers, "add_fetcher_for_partitions", refuse)
    body = h.controller.leader_and_isr([PartitionSpec("t", 0, LEADER_ELSEWHERE, leader_epoch=1,
                                                      replicas=(ME, LEADER_ELSEWHERE))])
    body.live_leaders = [UNREACHABLE_LEADER]
    outcome = asyncio.run(h.changes.become_leader_or_follower(body))
    assert outcome.partitions == {T0: E.KAFKA_STORAGE_ERROR}
    assert h.replicas.hosted("t", 0) is None and h.log_manager.get_log("t", 0) is None
    assert h.listener.calls == []
