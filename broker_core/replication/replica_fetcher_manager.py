"""Which fetcher replicates which followed partition (Kafka's ``ReplicaFetcherManager``/``AbstractFetcherManager``).

Each source broker gets up to ``num.replica.fetchers`` fetchers; a partition
goes to fetcher ``abs(31 * hash(topic) + partition) % num.replica.fetchers``
of its leader (Java's ``String.hashCode``, as Kafka spreads them), so the
partitions of one leader share a few connections and a few long-polls.
Fetchers start with their first partition; the replica manager shuts the
idle ones down after each LeaderAndIsr.

Used on the broker's event loop only; nothing here waits except
:meth:`close`, which stops every fetcher within a bounded time.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from broker_core.config.broker_config import BrokerConfig
from broker_core.replication.fetch_state import InitialFetchState, PartitionFetchState
from broker_core.replication.leader_endpoint import BrokerEndpoint, FetchSettings, RemoteLeaderEndpoint
from broker_core.replication.replica_fetcher import LeaderClient, PartitionLookup, ReplicaFetcher
from broker_core.security.inter_broker import PLAINTEXT, InterBrokerSecurity
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

SHUTDOWN_TIMEOUT_S = 5.0

# How a fetcher reaches its leader: (endpoint, client id) -> a leader client.
LeaderClientFactory = Callable[[BrokerEndpoint, str], LeaderClient]


@dataclass(frozen=True, slots=True)
class ReplicaFetcherConfig:
    num_fetchers: int = 1
    backoff_ms: int = 1000
    fetch: FetchSettings = FetchSettings()
    # How fetchers connect: the inter-broker listener's security protocol and this broker's credentials.
    security: InterBrokerSecurity = PLAINTEXT

    @classmethod
    def from_broker_config(cls, config: BrokerConfig) -> ReplicaFetcherConfig:
        return cls(
            num_fetchers=config.get_int("num.replica.fetchers"),
            backoff_ms=config.get_int("replica.fetch.backoff.ms"),
            fetch=FetchSettings(
                max_wait_ms=config.get_int("replica.fetch.wait.max.ms"),
                min_bytes=config.get_int("replica.fetch.min.bytes"),
                max_bytes=config.get_int("replica.fetch.response.max.bytes"),
                partition_max_bytes=config.get_int("replica.fetch.max.bytes"),
                request_timeout_ms=config.get_int("replica.socket.timeout.ms"),
            ),
            security=InterBrokerSecurity.from_config(config),
        )


@dataclass(frozen=True, slots=True)
class _FetcherKey:
    broker_id: int
    fetcher_id: int


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def fetcher_id_for(tp: TopicPartition, num_fetchers: int) -> int:
    h = (31 * java_string_hash(tp.topic) + tp.partition) & 0xFFFFFFFF
    h = h - (1 << 32) if h & 0x80000000 else h
    # Kafka's Utils.abs maps Integer.MIN_VALUE to 0.
    return (0 if h == -(1 << 31) else abs(h)) % num_fetchers


class ReplicaFetcherManager:
    def __init__(
        self,
        *,
        node_id: int,
        config: ReplicaFetcherConfig,
        partitions: PartitionLookup,
        leader_client: LeaderClientFactory | None = None,
    ) -> None:
        self._node_id = node_id
        self._config = config
        self._partitions = partitions
        self._leader_client = leader_client or self._remote_leader
        self._fetchers: dict[_FetcherKey, ReplicaFetcher] = {}
        self._stopping: set[asyncio.Task[None]] = set()

    def _remote_leader(self, endpoint: BrokerEndpoint, client_id: str) -> LeaderClient:
        return RemoteLeaderEndpoint(endpoint, node_id=self._node_id, client_id=client_id,
                                    settings=self._config.fetch, security=self._config.security)

    # --- partitions ------------------------------------------------------------------------

    def add_fetcher_for_partitions(self, initial: Mapping[TopicPartition, InitialFetchState]) -> None:
        """Replicate each partition from its leader, in the fetcher the partition hashes to."""
        grouped: dict[_FetcherKey, dict[TopicPartition, InitialFetchState]] = {}
        for tp, start in initial.items():
            key = _FetcherKey(start.leader.broker_id, fetcher_id_for(tp, self._config.num_fetchers))
            grouped.setdefault(key, {})[tp] = start
        for key, partitions in grouped.items():
            leader = next(iter(partitions.values())).leader
            fetcher = self._fetchers.get(key)
            if fetcher is not None and fetcher.source != leader:
                # The broker came back at another address: a new connection, its partitions moved over.
                moved = fetcher.remove_partitions(fetcher.partitions)
                self._stop(key)
                fetcher = None
                partitions = {**{tp: InitialFetchState(leader, s.current_leader_epoch, s.fetch_offset)
                                 for tp, s in moved.items()}, **partitions}
            if fetcher is None:
                fetcher = self._start(key, leader)
            fetcher.add_partitions(partitions)
            logger.info("replicating %d partition(s) from %s in %s", len(partitions), leader, fetcher.name)

    def remove_fetcher_for_partitions(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, PartitionFetchState]:
        wanted = list(tps)
        removed: dict[TopicPartition, PartitionFetchState] = {}
        for fetcher in self._fetchers.values():
            removed.update(fetcher.remove_partitions(wanted))
        return removed

    def fetch_state(self, tp: TopicPartition) -> PartitionFetchState | None:
        for fetcher in self._fetchers.values():
            state = fetcher.fetch_state(tp)
            if state is not None:
                return state
        return None

    def leader_of(self, tp: TopicPartition) -> BrokerEndpoint | None:
        """The leader ``tp`` is replicated from, if a fetcher has it."""
        for fetcher in self._fetchers.values():
            if fetcher.fetch_state(tp) is not None:
                return fetcher.source
        return None

    @property
    def fetchers(self) -> list[ReplicaFetcher]:
        return list(self._fetchers.values())

    # --- lifecycle -------------------------------------------------------------------------

    def _start(self, key: _FetcherKey, leader: BrokerEndpoint) -> ReplicaFetcher:
        client_id = f"broker-{self._node_id}-fetcher-{key.fetcher_id}"
        fetcher = ReplicaFetcher(
            name=f"ReplicaFetcher-{key.fetcher_id}-{key.broker_id}",
            leader=self._leader_client(leader, client_id),
            partitions=self._partitions,
            backoff_ms=self._config.backoff_ms,
        )
        self._fetchers[key] = fetcher
        fetcher.start()
        return fetcher

    def _stop(self, key: _FetcherKey) -> None:
        fetcher = self._fetchers.pop(key)
        task = fetcher.stop()
        if task is not None:
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)

    def shutdown_idle_fetchers(self) -> None:
        for key in [key for key, fetcher in self._fetchers.items() if fetcher.idle]:
            logger.info("stopping %s: it replicates nothing any more", self._fetchers[key].name)
            self._stop(key)

    def stop_all(self) -> None:
        """Stop every fetcher now, without waiting for its task to end."""
        for key in list(self._fetchers):
            self._stop(key)

    async def close(self, timeout_s: float = SHUTDOWN_TIMEOUT_S) -> None:
        """Stop every fetcher and wait (at most ``timeout_s``) for their tasks to end."""
        self.stop_all()
        pending = set(self._stopping)
        if pending:
            _, late = await asyncio.wait(pending, timeout=timeout_s)
            if late:
                logger.warning("%d replica fetcher(s) did not stop within %.1fs", len(late), timeout_s)
