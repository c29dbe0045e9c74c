"""Fetchers per source broker: which fetcher a partition goes to, moves between leaders, idle fetchers, shutdown."""

from __future__ import annotations

import asyncio
from typing import Any

from broker_core.config.broker_config import BrokerConfig
from broker_core.replication.fetch_state import InitialFetchState
from broker_core.replication.leader_endpoint import BrokerEndpoint, FetchSettings
from broker_core.replication.replica_fetcher_manager import (
    ReplicaFetcherConfig,
    ReplicaFetcherManager,
    fetcher_id_for,
    java_string_hash,
)
from spate.structs import TopicPartition

ONE, TWO = BrokerEndpoint(1, "h1", 9001), BrokerEndpoint(2, "h2", 9002)


class IdleLeader:
    """A leader client that never answers a fetch (the fetcher just waits)."""

    def __init__(self, endpoint: BrokerEndpoint, client_id: str) -> None:
        self.endpoint = endpoint
        self.client_id = client_id
        self.closed = False

    async def fetch(self, positions: Any) -> dict:
        await asyncio.Event().wait()
        return {}

    async def fetch_epoch_end_offsets(self, wanted: Any) -> dict:
        await asyncio.Event().wait()
        return {}

    async def fetch_earliest_offset(self, tp: TopicPartition, epoch: int) -> int:
        return 0

    async def fetch_latest_offset(self, tp: TopicPartition, epoch: int) -> int:
        return 0

    def close(self) -> None:
        self.closed = True


def manager(num_fetchers: int = 1) -> ReplicaFetcherManager:
    return ReplicaFetcherManager(node_id=5, config=ReplicaFetcherConfig(num_fetchers=num_fetchers, backoff_ms=10),
                                 partitions=lambda tp: None, leader_client=IdleLeader)


def test_java_string_hash_matches_javas() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("abc") == 96354
    # The string whose hashCode is Integer.MIN_VALUE.
    assert java_string_hash("polygenelubricants") == -(2**31)
    assert java_string_hash("é€😀") == 0xE9 * 31**3 + 0x20AC * 31**2 + 0xD83D * 31 + 0xDE00


def test_partitions_spread_over_fetchers_as_kafka_spreads_them() -> None:
    # abs(31 * hashCode("abc") + partition) % n
    assert [fetcher_id_for(TopicPartition("abc", p), 4) for p in range(4)] == [(96354 * 31 + p) % 4 for p in range(4)]
    assert fetcher_id_for(TopicPartition("abc", 7), 1) == 0


def test_each_leader_gets_its_fetchers_and_idle_ones_stop() -> None:
    async def scenario() -> None:
        fetchers = manager(num_fetchers=2)
        tps = [TopicPartition("t", p) for p in range(6)]
        fetchers.add_fetcher_for_partitions({tp: InitialFetchState(ONE if tp.partition < 4 else TWO, 1, 0)
                                             for tp in tps})
        by_name = {f.name: sorted(tp.partition for tp in f.partitions) for f in fetchers.fetchers}
        expected = {}
        for tp in tps:
            leader = 1 if tp.partition < 4 else 2
            expected.setdefault(f"ReplicaFetcher-{fetcher_id_for(tp, 2)}-{leader}", []).append(tp.partition)
        assert by_name == expected
        assert all(f.leader.client_id.startswith("broker-5-fetcher-") for f in fetchers.fetchers)
        assert fetchers.leader_of(tps[0]) == ONE and fetchers.leader_of(tps[5]) == TWO
        # Partitions 4 and 5 move to broker 1: broker 2's fetchers have nothing left and stop.
        removed = fetchers.remove_fetcher_for_partitions([tps[4], tps[5]])
        assert set(removed) == {tps[4], tps[5]}
        fetchers.add_fetcher_for_partitions({tp: InitialFetchState(ONE, 2, 0) for tp in tps[4:]})
        fetchers.shutdown_idle_fetchers()
        assert {f.source for f in fetchers.fetchers} == {ONE}
        assert fetchers.fetch_state(tps[5]).current_leader_epoch == 2
        await fetchers.close(timeout_s=2)
        assert fetchers.fetchers == []

    asyncio.run(scenario())


def test_a_leader_back_at_another_address_gets_a_new_fetcher_with_the_partitions() -> None:
    async def scenario() -> None:
        fetchers = manager()
        a, b = TopicPartition("t", 0), TopicPartition("t", 1)
        fetchers.add_fetcher_for_partitions({a: InitialFetchState(ONE, 1, 0), b: InitialFetchState(ONE, 1, 3)})
        (old,) = fetchers.fetchers
        moved = BrokerEndpoint(1, "h1-new", 9100)
        fetchers.add_fetcher_for_partitions({a: InitialFetchState(moved, 2, 0)})
        (new,) = fetchers.fetchers
        assert new is not old and old.leader.closed
        assert new.source == moved and sorted(new.partitions) == [a, b]
        assert new.fetch_state(a).current_leader_epoch == 2 and new.fetch_state(b).fetch_offset == 3
        await fetchers.close(timeout_s=2)

    asyncio.run(scenario())


def test_close_stops_fetchers_waiting_on_their_leader_within_the_timeout() -> None:
    async def scenario() -> None:
        fetchers = manager()
        fetchers.add_fetcher_for_partitions({TopicPartition("t", 0): InitialFetchState(ONE, 1, 0)})
        await asyncio.sleep(0.05)
        (fetcher,) = fetchers.fetchers
        loop = asyncio.get_running_loop()
        started = loop.time()
        await fetchers.close(timeout_s=2)
        assert loop.time() - started < 1
        assert fetcher.leader.closed

    asyncio.run(scenario())


def test_the_settings_come_from_the_brokers_replica_fetch_config() -> None:
    config = BrokerConfig.from_properties({
        "broker.id": "1", "num.replica.fetchers": "3", "replica.fetch.backoff.ms": "250",
        "replica.fetch.wait.max.ms": "400", "replica.fetch.min.bytes": "10", "replica.fetch.max.bytes": "2048",
        "replica.fetch.response.max.bytes": "8192", "replica.socket.timeout.ms": "7000",
    })
    assert ReplicaFetcherConfig.from_broker_config(config) == ReplicaFetcherConfig(
        num_fetchers=3, backoff_ms=250,
        fetch=FetchSettings(max_wait_ms=400, min_bytes=10, max_bytes=8192, partition_max_bytes=2048,
                            request_timeout_ms=7000),
    )
    defaults = ReplicaFetcherConfig.from_broker_config(BrokerConfig.from_properties({"broker.id": "1"}))
    assert defaults == ReplicaFetcherConfig(
        num_fetchers=1, backoff_ms=1000,
        fetch=FetchSettings(max_wait_ms=500, min_bytes=1, max_bytes=10485760, partition_max_bytes=1048576,
                            request_timeout_ms=30000),
    )
