"""LeaderAndIsr and StopReplica through the replica manager: leaders get the controller's ISR, followers a fetcher."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Awaitable, Callable

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.topic_config import to_log_config_kwargs
from broker_core.replication.fetch_state import FetchPhase
from broker_core.replication.leader_endpoint import BrokerEndpoint
from broker_core.server.metadata_cache import MetadataCache
from broker_core.server.purgatory import FetchPurgatory
from broker_core.server.replica_manager import ReplicaManager
from broker_core.server.replica_state_changes import ReplicaStateChanges
from broker_core.storage.config import LogConfig
from broker_core.storage.log_manager import LogManager
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.leader_and_isr import LeaderAndIsrRequest
from spate.records import Record, build_batch
from spate.structs import TopicPartition
from tests.support.controller_requests import Broker, FakeController, PartitionSpec

E = ErrorCode
ME = 1
T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
# Nobody listens there: the fetchers keep backing off, which is all these tests need of them.
TWO = BrokerEndpoint(2, "127.0.0.1", 1)
THREE = BrokerEndpoint(3, "127.0.0.1", 2)


class Harness:
    def __init__(self, data_dir: Path) -> None:
        config = BrokerConfig.from_properties({"broker.id": str(ME), "log.dirs": str(data_dir),
                                               "replica.fetch.backoff.ms": "50"})
        self.now = 1_000
        log_manager = LogManager([data_dir], LogConfig(**to_log_config_kwargs(config)), clock=lambda: 0)
        self.replicas = ReplicaManager(node_id=ME, log_manager=log_manager, broker_config=config,
                                       clock=lambda: self.now, purgatory=FetchPurgatory())
        self.cache = MetadataCache(cluster_id="c", listener_name="PLAINTEXT")
        self.changes = ReplicaStateChanges(node_id=ME, replicas=self.replicas, cache=self.cache,
                                           topic_configs=lambda topics: {}, broker_epoch=lambda: -1)
        self.controller = FakeController(epoch=3)

    async def lead(self, *specs: PartitionSpec, live: tuple[BrokerEndpoint, ...] = (TWO, THREE)) -> Any:
        body = self.controller.leader_and_isr(specs)
        body.live_leaders = [LeaderAndIsrRequest.LeaderAndIsrLiveLeader(broker_id=b.broker_id, host_name=b.host,
                                                                        port=b.port) for b in live]
        return await self.changes.become_leader_or_follower(body)

    async def stop(self, *entries: tuple[str, int, int, bool]) -> Any:
        return await self.changes.stop_replicas(self.controller.stop_replica(entries))

    async def close(self) -> None:
        await self.replicas.shutdown_fetchers()
        self.replicas.shutdown()


def run(data_dir: Path, test: Callable[[Harness], Awaitable[None]]) -> None:
    async def scenario() -> None:
        h = Harness(data_dir)
        try:
            await test(h)
        finally:
            await h.close()

    asyncio.run(asyncio.wait_for(scenario(), 20))


def test_a_leader_takes_the_controllers_isr_replicas_and_partition_epoch(tmp_path: Path) -> None:
    async def test(h: Harness) -> None:
        await h.lead(PartitionSpec("t", 0, ME, leader_epoch=2, replicas=(ME, 2, 3), isr=(ME, 3), zk_version=7))
        partition = h.replicas.get("t", 0)
        assert (partition.isr, partition.replicas, partition.partition_epoch) == ((ME, 3), (ME, 2, 3), 7)
        # In-sync followers count as caught up from the moment of leadership.
        assert partition.follower(3).last_caught_up_ms == 1_000 and partition.follower(2).last_caught_up_ms == 0
        assert h.replicas.fetchers.fetchers == []

    run(tmp_path, test)


def test_a_follower_is_replicated_from_the_leader_the_request_lists(tmp_path: Path) -> None:
    async def test(h: Harness) -> None:
        outcome = await h.lead(PartitionSpec("t", 0, 2, leader_epoch=4, replicas=(2, ME), isr=(2, ME), zk_version=3))
        assert outcome.partitions == {T0: E.NONE}
        partition = h.replicas.hosted("t", 0)
        assert (partition.leader_id, partition.leader_epoch, partition.isr, partition.partition_epoch) == (
            2, 4, (2, ME), 3)
        assert h.replicas.get("t", 0) is None
        assert h.replicas.fetchers.leader_of(T0) == TWO
        state = h.replicas.fetchers.fetch_state(T0)
        assert (state.current_leader_epoch, state.phase) == (4, FetchPhase.TRUNCATING)
        # A partition first opened as a follower records no epoch of its own.
        assert partition.log.epoch_cache.entries == ()

    run(tmp_path, test)


def test_a_leader_missing_from_the_request_is_found_in_the_metadata_cache(tmp_path: Path) -> None:
    async def test(h: Harness) -> None:
        await h.changes.update_metadata(h.controller.update_metadata([Broker(ME, "h", 9), Broker(3, "host-3", 9093)]))
        await h.lead(PartitionSpec("t", 0, 3, leader_epoch=1, replicas=(3, ME)), live=())
        assert h.replicas.fetchers.leader_of(T0) == BrokerEndpoint(3, "host-3", 9093)
        # A leader nobody knows: followed, but not replicated until a LeaderAndIsr names a reachable one.
        await h.lead(PartitionSpec("t", 1, 4, leader_epoch=1, replicas=(4, ME)), live=())
        assert h.replicas.hosted("t", 1).leader_id == 4
        assert h.replicas.fetchers.fetch_state(T1) is None

    run(tmp_path, test)


def test_leadership_moves_take_the_partition_out_of_and_into_fetchers(tmp_path: Path) -> None:
    async def test(h: Harness) -> None:
        await h.lead(PartitionSpec("t", 0, ME, leader_epoch=1, replicas=(ME, 2, 3), isr=(ME,)))
        h.replicas.get("t", 0).append_records(build_batch([Record(0, 1, None, b"v")]))
        await h.lead(PartitionSpec("t", 0, 2, leader_epoch=2, replicas=(ME, 2, 3)))
        assert h.replicas.fetchers.leader_of(T0) == TWO
        assert h.replicas.hosted("t", 0).log_end_offset == 1
        # The leader moves on to broker 3: broker 2's fetcher has nothing left and stops.
        await h.lead(PartitionSpec("t", 0, 3, leader_epoch=3, replicas=(ME, 2, 3)))
        assert [f.source for f in h.replicas.fetchers.fetchers] == [THREE]
        assert h.replicas.fetchers.fetch_state(T0).current_leader_epoch == 3
        # Leading again: no fetcher replicates it.
        await h.lead(PartitionSpec("t", 0, ME, leader_epoch=4, replicas=(ME, 2, 3), isr=(ME,)))
        assert h.replicas.fetchers.fetch_state(T0) is None and h.replicas.fetchers.fetchers == []
        assert h.replicas.get("t", 0).leader_epoch == 4

    run(tmp_path, test)


def test_stop_replica_takes_the_partition_out_of_its_fetcher(tmp_path: Path) -> None:
    async def test(h: Harness) -> None:
        await h.lead(PartitionSpec("t", 0, 2, leader_epoch=1, replicas=(2, ME)),
                     PartitionSpec("t", 1, 2, leader_epoch=1, replicas=(2, ME)))
        (fetcher,) = h.replicas.fetchers.fetchers
        assert sorted(fetcher.partitions) == [T0, T1]
        outcome = await h.stop(("t", 0, 1, False))
        assert outcome.partitions == {T0: E.NONE}
        assert fetcher.partitions == [T1]
        await h.stop(("t", 1, -2, True))
        assert h.replicas.fetchers.fetchers == []
        assert h.replicas.hosted("t", 1) is None

    run(tmp_path, test)


def test_fetchers_stop_within_a_bounded_time(tmp_path: Path) -> None:
    async def test(h: Harness) -> None:
        await h.lead(PartitionSpec("t", 0, 2, leader_epoch=1, replicas=(2, ME)))
        await asyncio.sleep(0.1)
        loop = asyncio.get_running_loop()
        started = loop.time()
        await h.replicas.shutdown_fetchers()
        assert loop.time() - started < 2
        assert h.replicas.fetchers.fetchers == []

    run(tmp_path, test)
