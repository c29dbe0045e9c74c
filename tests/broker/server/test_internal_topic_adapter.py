"""``BrokerInternalTopic`` as ``__consumer_offsets`` on a real partition: transactional offset batches,
markers, and reloading them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from broker_core.cluster.topic_names import CONSUMER_OFFSETS_TOPIC
from broker_core.coordinator.group import GroupConfig, GroupCoordinator
from broker_core.coordinator.group.results import OffsetCommitEntry
from broker_core.replication.partition import Partition
from broker_core.server.internal_topic_adapter import BrokerInternalTopic
from broker_core.storage.config import LogConfig
from broker_core.storage.files import TopicPartition
from broker_core.storage.local_log import LocalLog
from broker_core.storage.unified_log import UnifiedLog
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import ManualScheduler

E = ErrorCode
T0 = TopicPartition("t", 0)
PID = 7000


@dataclass(frozen=True)
class _TopicInfo:
    partition_count: int


class _Store:
    def get_topic(self, name: str) -> _TopicInfo:
        return _TopicInfo(1)


class _Replicas:
    """This broker leads the single ``__consumer_offsets`` partition."""

    def __init__(self, partition: Partition) -> None:
        self.partition = partition
        self.notified = 0

    def get(self, topic: str, index: int) -> Partition | None:
        return self.partition if (topic, index) == (CONSUMER_OFFSETS_TOPIC, 0) else None

    def notify_append(self, partition: Partition) -> None:
        self.notified += 1


@dataclass
class _Broker:
    partition: Partition
    coordinator: GroupCoordinator
    scheduler: ManualScheduler

    def txn_commit(self, offset: int, *, epoch: int = 0) -> dict:
        return self.coordinator.handle_txn_offset_commit(
            transactional_id="tx", group_id="g", producer_id=PID, producer_epoch=epoch,
            offsets={T0: OffsetCommitEntry(offset)},
        )

    def plain_commit(self, offset: int) -> dict:
        return self.coordinator.commit_offsets(
            group_id="g", member_id="", group_instance_id=None, generation_id=-1,
            offsets={T0: OffsetCommitEntry(offset)},
        )

    def end_txn(self, *, commit: bool, epoch: int = 0) -> None:
        self.partition.write_txn_marker(producer_id=PID, producer_epoch=epoch, coordinator_epoch=0, commit=commit)
        self.coordinator.complete_transactional_offsets(offsets_partition=0, producer_id=PID, commit=commit)

    def offset(self) -> int:
        return self.coordinator.fetch_offsets(group_id="g", partitions=[T0]).offsets[T0].offset


def _start(directory: Path, scheduler: ManualScheduler | None = None) -> _Broker:
    scheduler = scheduler or ManualScheduler()
    local_log = LocalLog.open(directory, LogConfig(), clock=scheduler.now_ms)
    log = UnifiedLog(local_log, clock=scheduler.now_ms, producer_id_expiration_ms=86_400_000)
    partition = Partition(CONSUMER_OFFSETS_TOPIC, 0, log, leader_epoch=0)
    config = GroupConfig(offsets_topic_partitions=1)
    topic = BrokerInternalTopic(config.offsets_topic_spec, store=_Store(), topics=None, replicas=_Replicas(partition))
    coordinator = GroupCoordinator(config, topic, scheduler)
    coordinator.startup()
    scheduler.advance(0)
    return _Broker(partition, coordinator, scheduler)


def _restart(broker: _Broker, directory: Path) -> _Broker:
    broker.coordinator.shutdown()
    broker.partition.checkpoint()
    broker.partition.log.close()
    return _start(directory, broker.scheduler)


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path / f"{CONSUMER_OFFSETS_TOPIC}-0"


def test_transactional_offsets_open_a_transaction_in_the_partition_until_the_marker(directory: Path) -> None:
    broker = _start(directory)
    broker.plain_commit(3)
    assert broker.txn_commit(7) == {T0: E.NONE}
    assert broker.partition.last_stable_offset < broker.partition.high_watermark
    assert broker.offset() == 3
    broker.end_txn(commit=True)
    assert broker.offset() == 7
    assert broker.partition.last_stable_offset == broker.partition.high_watermark


def test_an_open_transaction_found_on_reload_ends_with_its_marker(directory: Path) -> None:
    broker = _start(directory)
    broker.txn_commit(7)
    reloaded = _restart(broker, directory)
    assert reloaded.offset() == -1
    reloaded.end_txn(commit=True)
    assert reloaded.offset() == 7
    assert _restart(reloaded, directory).offset() == 7


def test_an_aborted_transaction_is_gone_after_a_reload_and_a_later_plain_commit_stands(directory: Path) -> None:
    broker = _start(directory)
    broker.plain_commit(3)
    broker.txn_commit(7)
    broker.end_txn(commit=False)
    broker.plain_commit(4)
    assert _restart(broker, directory).offset() == 4


def test_a_fenced_epoch_is_refused_by_the_partition(directory: Path) -> None:
    broker = _start(directory)
    assert broker.txn_commit(7, epoch=2) == {T0: E.NONE}
    broker.end_txn(commit=True, epoch=2)
    assert broker.txn_commit(8, epoch=1) == {T0: E.INVALID_PRODUCER_EPOCH}
    assert broker.offset() == 7 and broker.coordinator.group_manager.get_group("g").pending_txn_offsets == {}
