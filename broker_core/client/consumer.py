"""Spate's consumer: assign partitions, poll records or whole batches, move positions.

::

    with Consumer("127.0.0.1:9092", auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition("orders", 0)])
        for record in consumer.poll(timeout_ms=1000):
            ...
        for batch in consumer.poll_batches(timeout_ms=1000):   # columns, for Arrow
            batch.offsets, batch.values

Single-threaded: every call does its network work on the caller's thread,
and a consumer must not be shared between threads. Options follow the Kafka
consumer's names and defaults. ``poll`` returns at most ``max_records``
records and waits at most ``timeout_ms`` when nothing is buffered; between
polls the next fetch is already in flight.

Consumer groups (``subscribe``, ``commit``, committed offsets) arrive with
the group coordinator: they will feed the subscription state that
``assign`` feeds today.
"""

from __future__ import annotations

import random
import socket
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

from broker_core.client.config import ClientConfig, parse_isolation_level
from broker_core.client.connection import SocketFactory
from broker_core.client.consumer_record import ConsumerRecord, FetchedBatch
from broker_core.client.errors import ClientClosedError, KafkaTimeoutError
from broker_core.client.fetcher import Fetcher, FetchSettings
from broker_core.client.list_offsets import EARLIEST, LATEST, list_offsets
from broker_core.client.network_client import NetworkClient
from broker_core.client.subscription_state import OffsetResetStrategy, SubscriptionState
from broker_core.client.topic_partition import OffsetAndTimestamp, TopicPartition

# A poll with nothing to do still yields to the network at least this often (seconds),
# so that metadata refreshes and resets progress.
_MAX_POLL_STEP = 0.1


class Consumer:
    def __init__(
        self,
        bootstrap_servers: str | Sequence[str],
        *,
        isolation_level: str = "read_uncommitted",
        fetch_min_bytes: int = 1,
        fetch_max_wait_ms: int = 500,
        max_partition_fetch_bytes: int = 1_048_576,
        fetch_max_bytes: int = 52_428_800,
        auto_offset_reset: str = "latest",
        check_crcs: bool = True,
        request_timeout_ms: int = 30_000,
        default_api_timeout_ms: int = 60_000,
        retry_backoff_ms: int = 100,
        retry_backoff_max_ms: int = 1_000,
        connect_timeout_ms: int = 10_000,
        metadata_max_age_ms: int = 300_000,
        client_id: str = "spate-consumer",
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        socket_factory: SocketFactory = socket.create_connection,
    ) -> None:
        """Create a consumer (no connection is made until it is used).

        ``default_api_timeout_ms`` bounds the blocking calls (``position``,
        ``beginning_offsets``, ...) that take no timeout of their own.
        """
        if fetch_min_bytes < 0 or fetch_max_wait_ms < 0:
            raise ValueError("fetch_min_bytes and fetch_max_wait_ms must not be negative")
        if max_partition_fetch_bytes <= 0 or fetch_max_bytes <= 0:
            raise ValueError("max_partition_fetch_bytes and fetch_max_bytes must be positive")
        self._isolation_level = parse_isolation_level(isolation_level)
        self._clock = clock
        self._api_timeout = default_api_timeout_ms / 1000
        config = ClientConfig(
            client_id=client_id,
            connect_timeout_ms=connect_timeout_ms,
            request_timeout_ms=request_timeout_ms,
            retry_backoff_ms=retry_backoff_ms,
            retry_backoff_max_ms=retry_backoff_max_ms,
            metadata_max_age_ms=metadata_max_age_ms,
        )
        self._network = NetworkClient(bootstrap_servers, config, clock=clock, rng=rng, socket_factory=socket_factory)
        self._subscriptions = SubscriptionState(OffsetResetStrategy.parse(auto_offset_reset))
        self._fetcher = Fetcher(
            self._network,
            self._subscriptions,
            FetchSettings(
                isolation_level=self._isolation_level,
                fetch_min_bytes=fetch_min_bytes,
                fetch_max_wait_ms=fetch_max_wait_ms,
                fetch_max_bytes=fetch_max_bytes,
                max_partition_fetch_bytes=max_partition_fetch_bytes,
                check_crcs=check_crcs,
            ),
            clock,
        )
        self._closed = False

    # --- assignment -------------------------------------------------------------------------------

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly these partitions from now on (replacing any earlier assignment).

        Partitions kept from the previous assignment keep their positions;
        new ones start per ``auto_offset_reset`` unless you ``seek``.
        """
        self._check_open()
        self._subscriptions.assign(partitions)
        self._fetcher.discard_unassigned()
        self._network.metadata.set_topics(self._subscriptions.topics())

    def assignment(self) -> set[TopicPartition]:
        return self._subscriptions.assignment()

    # --- polling ----------------------------------------------------------------------------------

    def poll(self, timeout_ms: float = 0, max_records: int = 500) -> list[ConsumerRecord]:
        """Up to ``max_records`` records, waiting up to ``timeout_ms`` for some to arrive.

        Raises OffsetOutOfRangeError (``auto_offset_reset="none"``),
        NoOffsetForPartitionError, or a KafkaError the broker answered a
        fetch with.
        """
        if max_records < 1:
            raise ValueError(f"max_records must be at least 1, not {max_records}")
        return self._poll(timeout_ms, lambda: self._fetcher.drain_records(max_records))

    def poll_batches(self, timeout_ms: float = 0) -> list[FetchedBatch]:
        """Every buffered batch as columns, waiting up to ``timeout_ms`` for some to arrive.

        The fast path: no per-record objects are built. Positions move past
        every batch returned.
        """
        return self._poll(timeout_ms, self._fetcher.drain_batches)

    def _poll(self, timeout_ms: float, drain: Callable[[], list[Any]]) -> list[Any]:
        self._check_open()
        if not self._subscriptions.assignment():
            raise ValueError("poll() needs an assignment: call assign() first")
        deadline = self._clock() + max(0.0, timeout_ms) / 1000
        while True:
            self._fetcher.raise_error()
            out = drain()
            # Send the next fetches before handing data out, so they overlap with the caller's work.
            self._step()
            if out:
                return out
            remaining = deadline - self._clock()
            if remaining <= 0:
                return []
            self._network.poll(min(remaining, _MAX_POLL_STEP))

    def _step(self) -> None:
        """Non-blocking progress: metadata, resets, fetches."""
        now = self._clock()
        self._network.maybe_update_metadata(now)
        self._fetcher.send_resets()
        self._fetcher.send_fetches()
        self._network.poll(0)

    # --- positions --------------------------------------------------------------------------------

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Read ``partition`` from ``offset`` on the next poll."""
        self._check_open()
        self._subscriptions.seek(partition, offset)
        self._fetcher.discard(partition)

    def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        """Move to the log start of each partition (all assigned ones if none named), lazily."""
        self._reset(partitions, OffsetResetStrategy.EARLIEST)

    def seek_to_end(self, *partitions: TopicPartition) -> None:
        """Move to the end (high watermark, or LSO under read_committed), lazily."""
        self._reset(partitions, OffsetResetStrategy.LATEST)

    def _reset(self, partitions: Sequence[TopicPartition], strategy: OffsetResetStrategy) -> None:
        self._check_open()
        for tp in partitions or sorted(self._subscriptions.assignment()):
            self._subscriptions.request_reset(tp, strategy)
            self._fetcher.discard(tp)

    def position(self, partition: TopicPartition, timeout_ms: float | None = None) -> int:
        """The offset of the next record ``poll`` returns for ``partition``, resolving a pending reset."""
        self._check_open()
        state = self._subscriptions.state(partition)
        deadline = self._deadline(timeout_ms)
        while state.position is None:
            if state.reset is None:
                self._subscriptions.request_reset(partition)
            self._fetcher.raise_error()
            self._step()
            if state.position is not None:
                break
            remaining = deadline - self._clock()
            if remaining <= 0:
                raise KafkaTimeoutError(f"the position of {partition} was not resolved in time")
            self._network.poll(min(remaining, _MAX_POLL_STEP))
        return state.position

    def pause(self, *partitions: TopicPartition) -> None:
        """Stop fetching these partitions until ``resume``; their positions stay."""
        for tp in partitions:
            self._subscriptions.pause(tp)
            self._fetcher.discard(tp)

    def resume(self, *partitions: TopicPartition) -> None:
        for tp in partitions:
            self._subscriptions.resume(tp)

    def paused(self) -> set[TopicPartition]:
        return self._subscriptions.paused()

    # --- offset lookups ---------------------------------------------------------------------------

    def offsets_for_times(
        self, timestamps: Mapping[TopicPartition, int], timeout_ms: float | None = None
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """For each partition, the earliest offset whose timestamp is at least the given one (None: none)."""
        for tp, timestamp in timestamps.items():
            if timestamp < 0:
                raise ValueError(f"timestamp for {tp} must not be negative, not {timestamp}")
        return self._list_offsets(dict(timestamps), timeout_ms, "offsets_for_times")

    def beginning_offsets(
        self, partitions: Iterable[TopicPartition], timeout_ms: float | None = None
    ) -> dict[TopicPartition, int]:
        found = self._list_offsets({tp: EARLIEST for tp in partitions}, timeout_ms, "beginning_offsets")
        return {tp: result.offset if result is not None else -1 for tp, result in found.items()}

    def end_offsets(
        self, partitions: Iterable[TopicPartition], timeout_ms: float | None = None
    ) -> dict[TopicPartition, int]:
        """The high watermark of each partition (the last stable offset under read_committed)."""
        found = self._list_offsets({tp: LATEST for tp in partitions}, timeout_ms, "end_offsets")
        return {tp: result.offset if result is not None else -1 for tp, result in found.items()}

    def _list_offsets(
        self, specs: dict[TopicPartition, int], timeout_ms: float | None, what: str
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        self._check_open()
        if not specs:
            return {}
        return list_offsets(
            self._network, specs, isolation_level=self._isolation_level, deadline=self._deadline(timeout_ms), what=what
        )

    # --- lifecycle --------------------------------------------------------------------------------

    def close(self) -> None:
        """Close every connection; the consumer cannot be used afterwards."""
        if self._closed:
            return
        self._closed = True
        self._network.close()

    def __enter__(self) -> Consumer:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise ClientClosedError("the consumer is closed")

    def _deadline(self, timeout_ms: float | None) -> float:
        timeout = self._api_timeout if timeout_ms is None else max(0.0, timeout_ms) / 1000
        return self._clock() + timeout
