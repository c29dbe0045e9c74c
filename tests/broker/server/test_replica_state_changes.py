"""LeaderAndIsr, StopReplica and UpdateMetadata applied to a real replica manager: Kafka's fencing rules."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.topic_config import to_log_config_kwargs
from broker_core.server.metadata_cache import MetadataCache
from broker_core.server.purgatory import FetchPurgatory
from broker_core.server.replica_manager import ReplicaManager
from broker_core.server.replica_state_changes import ReplicaStateChanges
from broker_core.storage.config import LogConfig
from broker_core.storage.log_manager import LogManager
from spate.protocol.errors import ErrorCode
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
