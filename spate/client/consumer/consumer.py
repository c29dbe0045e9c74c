"""Spate's consumer: assign or subscribe, poll records or whole batches, move and commit positions.

::

    with Consumer("127.0.0.1:9092", auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition("orders", 0)])
        for record in consumer.poll(timeout_ms=1000):
            ...
        for batch in consumer.poll_batches(timeout_ms=1000):   # columns, for Arrow
            batch.offsets, batch.values
        for raw in consumer.poll_raw_batches(timeout_ms=1000): # undecoded RecordBatch bytes
            raw.buffer, raw.header, raw.start_offset

    with Consumer("127.0.0.1:9092", group_id="billing", enable_auto_commit=False) as consumer:
        consumer.subscribe(["orders"], on_assign=print, on_revoke=print)
        records = consumer.poll(timeout_ms=1000)
        consumer.commit()                                      # the positions after those records

Single-threaded: every call does its network work on the caller's thread,
and a consumer must not be shared between threads. Settings follow the Kafka
consumer's names and defaults (``consumer_config.py``). ``poll`` returns at most ``max_records``
records and waits at most ``timeout_ms`` when nothing is buffered; between
polls the next fetch is already in flight.

With a ``group_id`` the consumer either joins the group (``subscribe``: the
group divides the topics' partitions among its members and rebalances as
members come and go, see ``coordinator.py``) or reads partitions
it was given (``assign``) while still starting from, and committing to,
the group's offsets. Positions start at the group's committed offsets,
falling back to ``auto_offset_reset``. With ``enable_auto_commit`` (the
default, as in Kafka) positions are committed every
``auto_commit_interval_ms`` from ``poll``, before a rebalance and on
``close``: records may then be delivered twice after a failure, never lost
once processed before the next poll. Rebalance callbacks (``on_assign``,
``on_revoke``) run inside ``poll``.

With ``isolation_level="read_committed"`` records of aborted transactions
are never returned and reads stop at the last stable offset; transaction
markers are never returned at either level.
"""

from __future__ import annotations

import random
import re
import socket
import time
from concurrent.futures import Future
from typing import Any, Callable, Iterable, Mapping, Sequence

from spate.client.commit_offsets import offsets_to_commit
from spate.client.config import timeout_seconds
from spate.client.consumer.consumer_config import ConsumerConfig
from spate.client.consumer.consumer_record import ConsumerRecord, FetchedBatch, RawBatch
from spate.client.consumer.coordinator import ConsumerCoordinator, RebalanceCallback
from spate.client.consumer.fetcher import Fetcher
from spate.client.consumer.group_metadata import ConsumerGroupMetadata
from spate.client.consumer.list_offsets import EARLIEST, LATEST, list_offsets
from spate.client.consumer.subscription_state import OffsetResetStrategy, SubscriptionState
from spate.client.errors import ClientClosedError, KafkaTimeoutError
from spate.client.net.connection import SocketFactory
from spate.client.net.network_client import NetworkClient
from spate.structs import OffsetAndMetadata, OffsetAndTimestamp, TopicPartition

# A poll with nothing to do still yields to the network at least this often (seconds),
# so that metadata refreshes and resets progress.
_MAX_POLL_STEP = 0.1
# close() spends at most this long (seconds) on the group steps unless told otherwise.
_MAX_CLOSE_TIMEOUT = 30.0


class Consumer:
    def __init__(
        self,
        bootstrap_servers: str | Sequence[str],
        *,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        socket_factory: SocketFactory = socket.create_connection,
        **options: Any,
    ) -> None:
        """Create a consumer (no connection is made until it is used).

        ``options`` are the consumer's settings, by Kafka's names and with
        Kafka's defaults (``auto_offset_reset``, ``isolation_level``,
        ``group_id``, ``enable_auto_commit``, ``default_api_timeout_ms``, ...):
        see :class:`~spate.client.consumer.consumer_config.ConsumerConfig`. A
        bad value raises ValueError, an unknown name TypeError. ``clock``,
        ``rng`` and ``socket_factory`` are for tests.
        """
        self._config = config = ConsumerConfig.from_options("Consumer", options)
        self._isolation_level = config.isolation
        self._clock = clock
        self._api_timeout = config.default_api_timeout
        self._network = NetworkClient(bootstrap_servers, config, clock=clock, rng=rng, socket_factory=socket_factory)
        self._subscriptions = SubscriptionState(config.reset_strategy, use_committed_offsets=config.group_id is not None)
        self._fetcher = Fetcher(self._network, self._subscriptions, config, clock)
        self._group_id = config.group_id
        self._coordinator: ConsumerCoordinator | None = None
        if config.group_id is not None:
            self._coordinator = ConsumerCoordinator(
                self._network,
                self._subscriptions,
                config,
                on_assignment_changed=self._assignment_changed,
                clock=clock,
                rng=rng,
                socket_factory=socket_factory,
            )
        self._closed = False
        self._closing = False

    # --- assignment -------------------------------------------------------------------------------

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly these partitions from now on (replacing any earlier assignment).

        Partitions kept from the previous assignment keep their positions;
        new ones start per ``auto_offset_reset`` unless you ``seek``.
        """
        self._check_open()
        self._subscriptions.assign(partitions)
        self._assignment_changed()

    def assignment(self) -> set[TopicPartition]:
        return self._subscriptions.assignment()

    def subscribe(
        self,
        topics: str | Iterable[str] | re.Pattern[str],
        *,
        on_assign: RebalanceCallback | None = None,
        on_revoke: RebalanceCallback | None = None,
    ) -> None:
        """Join the group and read the partitions it assigns from ``topics``.

        ``topics`` is a list of names, or a pattern (a compiled regular
        expression, or a string starting with ``^``) matched against every
        topic, new ones included. Partitions arrive with the next ``poll``;
        ``on_revoke(partitions)`` runs before a rebalance takes them away
        (commit there for at-least-once without auto-commit) and
        ``on_assign(partitions)`` after the group has handed out new ones.
        Subscribing to nothing is ``unsubscribe``.
        """
        self._check_open()
        coordinator = self._group("subscribe")
        if isinstance(topics, str) and topics.startswith("^"):
            topics = re.compile(topics)
        if isinstance(topics, re.Pattern):
            self._subscriptions.subscribe_pattern(topics)
        else:
            names = [topics] if isinstance(topics, str) else list(topics)
            if not names:
                self.unsubscribe()
                return
            for name in names:
                if not isinstance(name, str) or not name:
                    raise ValueError(f"topic names must be non-empty strings, not {name!r}")
            self._subscriptions.subscribe(names)
        coordinator.set_callbacks(on_assign, on_revoke)
        coordinator.subscription_changed()
        self._network.metadata.set_topics(self._subscriptions.topics())

    def subscription(self) -> set[str]:
        """The topics subscribed to (for a pattern, those it matched so far)."""
        return set(self._subscriptions.subscribed_topics)

    def unsubscribe(self) -> None:
        """Leave the group (revoking the assignment) or drop a manual assignment."""
        self._check_open()
        if self._coordinator is not None and self._subscriptions.is_subscribed:
            self._coordinator.unsubscribe(self._deadline(None))
        self._subscriptions.unsubscribe()
        self._assignment_changed()

    def _assignment_changed(self) -> None:
        self._fetcher.discard_unassigned()
        self._network.metadata.set_topics(self._subscriptions.topics())
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

    def poll_raw_batches(self, timeout_ms: float = 0) -> list[RawBatch]:
        """Every buffered batch undecoded (Kafka's RecordBatch v2 bytes), waiting up to ``timeout_ms``.

        For readers with their own decoder: batch headers and CRCs are
        checked, transaction markers and (under read_committed) aborted
        transactions are left out as for ``poll``, but records are not
        decoded; skip each batch's records below its ``start_offset``.
        Positions move past every batch returned.
        """
        return self._poll(timeout_ms, self._fetcher.drain_raw_batches)

    def _poll(self, timeout_ms: float, drain: Callable[[], list[Any]]) -> list[Any]:
        self._check_open()
        if not self._subscriptions.assignment() and not self._subscriptions.is_subscribed:
            raise ValueError("poll() needs an assignment or a subscription: call assign() or subscribe() first")
        deadline = self._clock() + max(0.0, timeout_ms) / 1000
        while True:
            if self._coordinator is not None:
                self._coordinator.poll()
            self._fetcher.raise_error()
            out = drain()
            # Send the next fetches before handing data out, so they overlap with the caller's work.
            self._step()
            if not out and self._fetcher.has_buffered():
                # The step's network poll brought data in: hand it out now rather than
                # block below with records waiting, and fetch again behind it.
                out = drain()
                self._fetcher.send_fetches()
            if out:
                return out
            remaining = deadline - self._clock()
            if remaining <= 0:
                return []
            # The step's network poll may have completed a fetch that brought nothing to hand out (an
            # answer for a position a seek has left): the next fetch goes out now, not after the wait.
            self._fetcher.send_fetches()
            self._network.poll(min(remaining, _MAX_POLL_STEP))

    def _step(self) -> None:
        """Non-blocking progress: metadata, the group, resets, fetches."""
        now = self._clock()
        self._network.maybe_update_metadata(now)
        if self._coordinator is not None:
            self._coordinator.poll()
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

    # --- committed offsets ------------------------------------------------------------------------

    def commit(
        self,
        offsets: Mapping[TopicPartition, int | OffsetAndMetadata] | None = None,
        *,
        asynchronous: bool = False,
        timeout_ms: float | None = None,
    ) -> Future[None] | None:
        """Commit ``offsets`` (default: the position of every assigned partition) to the group.

        Offsets are the next ones to read (last processed + 1). Synchronous
        commits retry until ``timeout_ms`` and raise
        :class:`~spate.client.errors.CommitFailedError` when the group
        has rebalanced meanwhile; an asynchronous one returns a Future that
        the consumer resolves during later polls.
        """
        self._check_open()
        coordinator = self._group("commit")
        if offsets is None:
            chosen = {tp: OffsetAndMetadata(offset) for tp, offset in self._subscriptions.positions().items()}
        else:
            chosen = offsets_to_commit(offsets)
        if asynchronous:
            return coordinator.offsets.commit_async(chosen)
        coordinator.offsets.commit_sync(chosen, self._deadline(timeout_ms))
        return None

    def committed(
        self, partitions: Iterable[TopicPartition], timeout_ms: float | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """The group's committed offset of each partition (None where nothing is committed)."""
        self._check_open()
        return self._group("committed").offsets.fetch_committed(partitions, self._deadline(timeout_ms))

    def group_metadata(self) -> ConsumerGroupMetadata:
        """The group id, generation and member id, e.g. for ``Producer.send_offsets_to_transaction``."""
        return self._group("group_metadata").group_metadata()

    def _group(self, call: str) -> ConsumerCoordinator:
        if self._coordinator is None:
            raise ValueError(f"{call}() needs a consumer created with a group_id")
        return self._coordinator

    # --- lifecycle --------------------------------------------------------------------------------

    def close(self, timeout_ms: float | None = None) -> None:
        """Commit (with auto-commit), leave the group, close the fetch sessions and every connection.

        The group steps are best effort within ``timeout_ms`` (default: the
        smaller of ``default_api_timeout_ms`` and 30 s); then each broker
        still connected is told to drop the consumer's fetch session, for
        what remains of that time but at most ``request_timeout_ms``, as
        Kafka's consumer does (a broker answers it after the fetch it may be
        holding, so this can take up to ``fetch_max_wait_ms``). The consumer
        cannot be used afterwards.
        """
        if self._closed or self._closing:
            return
        # Rebalance callbacks may still commit while the group steps run.
        self._closing = True
        deadline = self._clock() + timeout_seconds(timeout_ms, min(self._api_timeout, _MAX_CLOSE_TIMEOUT))
        try:
            if self._coordinator is not None:
                self._coordinator.close(deadline)
        finally:
            try:
                self._fetcher.close_sessions(min(deadline, self._clock() + self._config.request_timeout_ms / 1000))
            finally:
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
        return self._clock() + timeout_seconds(timeout_ms, self._api_timeout)
