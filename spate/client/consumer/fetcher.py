"""Fetching for the consumer: requests to partition leaders, checking, buffering, resets.

At most one Fetch request is in flight per broker; it asks for every
fetchable partition that broker leads and that has nothing buffered, in the
broker's incremental fetch session (``fetch_sessions.py``: after the first
full fetch only changed partitions are named, and the answer holds only
partitions with news). Answers are checked as they are taken in
(``fetched_records.py``) and buffered per partition (``fetch_buffer.py``,
which hands them out and advances positions). Because a new fetch is sent
as soon as a partition's buffer is empty, the next response is usually on
its way while the application processes the last one.

Data for a partition whose position changed (seek, reset, pause) after the
request was sent is dropped. Partition errors: OFFSET_OUT_OF_RANGE resets the
position per ``auto_offset_reset`` (or, with ``none``, is raised from the
next poll as :class:`OffsetOutOfRangeError`); leader errors refresh metadata
and back off; anything else is raised from the next poll.

Resets (new assignment, ``seek_to_beginning``/``_end``, out of range) are
resolved with ListOffsets requests sent the same asynchronous way.

On close the fetch sessions are closed on their brokers (``close_sessions``).
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any, Callable

from spate.client.consumer.consumer_config import ConsumerConfig
from spate.client.consumer.consumer_record import ConsumerRecord, FetchedBatch, RawBatch
from spate.client.consumer.fetch_buffer import FetchBuffer, corrupt
from spate.client.consumer.fetch_sessions import SESSION_ERRORS, FetchPosition, FetchSessions, PreparedFetch
from spate.client.consumer.fetched_records import select_partition_batches
from spate.client.consumer.list_offsets import EARLIEST, LATEST, parse_response, send_list_offsets
from spate.client.consumer.subscription_state import OffsetResetStrategy, SubscriptionState
from spate.client.errors import ClientError, NoOffsetForPartitionError, OffsetOutOfRangeError
from spate.client.net.connection import InFlightRequest
from spate.client.net.metadata import LEADER_MOVED_ERRORS
from spate.client.net.network_client import NetworkClient
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.records.errors import CorruptRecordError
from spate.structs import TopicPartition

log = logging.getLogger(__name__)

# Answers after which fetching the partition again is worth it, once metadata is fresh.
_RETRY_FETCH_ERRORS = LEADER_MOVED_ERRORS | {ErrorCode.REPLICA_NOT_AVAILABLE, ErrorCode.OFFSET_NOT_AVAILABLE}
_RESET_TIMESTAMPS = {OffsetResetStrategy.EARLIEST: EARLIEST, OffsetResetStrategy.LATEST: LATEST}


class Fetcher:
    def __init__(
        self,
        network: NetworkClient,
        subscriptions: SubscriptionState,
        config: ConsumerConfig,
        clock: Callable[[], float],
    ) -> None:
        self.network = network
        self.subscriptions = subscriptions
        self.config = config
        self.isolation_level = config.isolation
        self.clock = clock
        self._fetches: dict[int, InFlightRequest] = {}
        self._resets: dict[int, InFlightRequest] = {}
        self._resetting: set[TopicPartition] = set()
        self._errors: deque[BaseException] = deque()
        self._buffer = FetchBuffer(subscriptions, self._errors)
        self.sessions = FetchSessions(config)
        # Partitions whose next batch is bigger than max_partition_fetch_bytes: they go first
        # in their next full request, where the broker returns one whole batch anyway (in an
        # incremental one the broker reads in its session's order, partitions that answered last).
        self._oversized: set[TopicPartition] = set()
        self._rotation = 0

    # --- sending ----------------------------------------------------------------------------------

    def send_fetches(self) -> None:
        now = self.clock()
        snapshot = self.network.metadata.snapshot
        fetchable = self.subscriptions.fetchable(now)
        if fetchable:
            # Start at a different partition each time, so none is always last in
            # line for fetch_max_bytes; oversized ones go first.
            start = self._rotation % len(fetchable)
            self._rotation += 1
            fetchable = fetchable[start:] + fetchable[:start]
            fetchable.sort(key=lambda tp: tp not in self._oversized)
        by_leader, leaderless = snapshot.by_leader(tp for tp in fetchable if tp not in self._buffer)
        if leaderless:
            self.network.metadata.request_update()
        for node, partitions in by_leader.items():
            if node not in self._fetches and self.network.connect_delay(node, now) <= 0:
                self._send_fetch(node, partitions, snapshot)

    def _send_fetch(self, node: int, partitions: list[TopicPartition], snapshot: Any) -> None:
        positions: dict[TopicPartition, FetchPosition] = {}
        for tp in partitions:
            position = self.subscriptions.position(tp)
            if position is not None:
                positions[tp] = FetchPosition(position, snapshot.leader_epoch(tp.topic, tp.partition))
        config = self.config
        # The broker may hold the request for max_wait before answering.
        timeout = (config.request_timeout_ms + config.fetch_max_wait_ms) / 1000
        prepared: PreparedFetch | None = None
        try:
            connection = self.network.connect(node)
            version = connection.version(ApiKey.FETCH)
            prepared = self.sessions.prepare(node, connection, version, positions)
            self._fetches[node] = self.network.send(
                node, ApiKey.FETCH, prepared.body, version=version, timeout=timeout, context=prepared,
                callback=self._on_fetch,
            )
        except ClientError as exc:
            if prepared is not None:
                self.sessions.handle_error(node)
            if not exc.retriable:
                raise
            log.debug("fetch to node %s not sent: %s", node, exc)
            self._back_off(partitions)

    # --- responses --------------------------------------------------------------------------------

    def _on_fetch(self, request: InFlightRequest) -> None:
        if self._fetches.get(request.node_id) is request:
            del self._fetches[request.node_id]
        fetch: PreparedFetch = request.context
        if request.error is not None:
            log.debug("fetch from node %s failed: %s", request.node_id, request.error)
            self.sessions.handle_error(request.node_id)
            self.network.metadata.request_update()
            self._back_off(list(fetch.positions))
            return
        response = request.response
        if not self.sessions.handle_response(fetch, response):
            self._session_refused(fetch, ErrorCode.of(response.error_code))
            return
        first = True  # the first partition with records: the broker returns at least one whole batch of it
        for topic in response.responses:
            for data in topic.partitions:
                tp = TopicPartition(topic.topic, data.partition_index)
                position = fetch.positions.get(tp)
                if position is not None:
                    self._take_partition(tp, position.fetch_offset, data, first)
                    first = first and not data.records

    def _session_refused(self, fetch: PreparedFetch, error: ErrorCode) -> None:
        """The answer was not usable: the next Fetch is a full one (at once, unless the broker failed)."""
        if error in SESSION_ERRORS or error == ErrorCode.NONE:
            log.debug("fetch session %s at node %s ended (%s); fetching in full", fetch.metadata.session_id,
                      fetch.node, error.name)
            return
        log.debug("fetch from node %s failed: %s", fetch.node, error.name)
        self.network.metadata.request_update()
        self._back_off(list(fetch.positions))

    def _take_partition(self, tp: TopicPartition, fetch_offset: int, data: Any, first: bool) -> None:
        subscriptions = self.subscriptions
        if not subscriptions.is_assigned(tp):
            return
        state = subscriptions.state(tp)
        if state.position != fetch_offset or state.paused:
            return  # the position moved on since the request was sent
        code = ErrorCode.of(data.error_code)
        if code == ErrorCode.NONE:
            state.high_watermark = data.high_watermark
            state.last_stable_offset = data.last_stable_offset
            state.log_start_offset = data.log_start_offset
            self._take_records(tp, fetch_offset, data, first)
            return
        if code == ErrorCode.OFFSET_OUT_OF_RANGE:
            if subscriptions.default_reset is OffsetResetStrategy.NONE:
                self._errors.append(OffsetOutOfRangeError(tp, fetch_offset, data.log_start_offset, data.high_watermark))
                state.retry_at = self.clock() + self.network.backoff.delay(0)
            else:
                log.info("fetch offset %s out of range for %s; resetting to %s", fetch_offset, tp,
                         subscriptions.default_reset.value)
                subscriptions.request_reset(tp)
            return
        if code in _RETRY_FETCH_ERRORS or code.retriable:
            self.network.metadata.request_update()
            self._back_off([tp])
            return
        self._errors.append(KafkaError(code, f"fetch {tp} at offset {fetch_offset}"))
        self._back_off([tp])

    def _take_records(self, tp: TopicPartition, fetch_offset: int, data: Any, first: bool) -> None:
        """Check a partition's batches and buffer its data batches (or step over markers and aborted data)."""
        try:
            selected = select_partition_batches(
                tp.topic,
                tp.partition,
                data.records,
                fetch_offset,
                isolation_level=self.isolation_level,
                aborted_transactions=data.aborted_transactions,
                check_crcs=self.config.check_crcs,
            )
        except CorruptRecordError as exc:
            self._errors.append(corrupt(tp, fetch_offset, exc))
            return
        if selected.oversized_batch_offset is not None:
            if not first:
                self._oversized.add(tp)
                return
            self._errors.append(
                KafkaError(
                    ErrorCode.MESSAGE_TOO_LARGE,
                    f"the batch at offset {selected.oversized_batch_offset} of {tp} is larger than "
                    f"max_partition_fetch_bytes ({self.config.max_partition_fetch_bytes}) and the "
                    f"broker returned only part of it",
                )
            )
            self._back_off([tp])
            return
        self._oversized.discard(tp)
        if selected.batches:
            self._buffer.add(tp, selected.batches, selected.next_offset)
        elif selected.next_offset > fetch_offset:
            # Only markers or aborted data: step over them.
            self.subscriptions.state(tp).position = selected.next_offset

    def _back_off(self, partitions: list[TopicPartition]) -> None:
        until = self.clock() + self.network.backoff.delay(0)
        for tp in partitions:
            if self.subscriptions.is_assigned(tp):
                self.subscriptions.state(tp).retry_at = until

    def raise_error(self) -> None:
        """Raise the oldest error a response left for the application, if any."""
        if self._errors:
            raise self._errors.popleft()

    # --- handing out (fetch_buffer.py) ---------------------------------------------------------

    def has_buffered(self) -> bool:
        return bool(self._buffer)

    def drain_records(self, max_records: int) -> list[ConsumerRecord]:
        return self._buffer.drain_records(max_records)

    def drain_batches(self) -> list[FetchedBatch]:
        return self._buffer.drain_batches()

    def drain_raw_batches(self) -> list[RawBatch]:
        return self._buffer.drain_raw_batches()

    def discard(self, tp: TopicPartition) -> None:
        """Forget buffered data of ``tp`` (after a seek, pause or reassignment)."""
        self._buffer.discard(tp)

    def discard_unassigned(self) -> None:
        self._buffer.discard_unassigned()

    # --- resets -----------------------------------------------------------------------------------

    def send_resets(self) -> None:
        """Send ListOffsets for partitions awaiting a reset (not already being reset)."""
        subscriptions = self.subscriptions
        for tp in subscriptions.missing_positions():
            subscriptions.request_reset(tp)
        now = self.clock()
        pending = {tp: s for tp, s in subscriptions.awaiting_reset(now).items() if tp not in self._resetting}
        if not pending:
            return
        for tp, strategy in list(pending.items()):
            if strategy is OffsetResetStrategy.NONE:
                self._errors.append(NoOffsetForPartitionError(tp))
                subscriptions.state(tp).reset = None
                del pending[tp]
        by_leader, leaderless = self.network.metadata.snapshot.by_leader(pending)
        if leaderless:
            self.network.metadata.request_update()
        for node, partitions in by_leader.items():
            if self.network.connect_delay(node, now) > 0:
                continue
            specs = {tp: _RESET_TIMESTAMPS[pending[tp]] for tp in partitions}
            try:
                request = send_list_offsets(
                    self.network, node, specs, self.isolation_level, callback=self._on_reset
                )
            except ClientError as exc:
                if not exc.retriable:
                    raise
                self._back_off(list(specs))
                continue
            self._resetting.update(specs)
            self._resets[id(request)] = request

    def _on_reset(self, request: InFlightRequest) -> None:
        self._resets.pop(id(request), None)
        specs: dict[TopicPartition, int] = request.context
        self._resetting.difference_update(specs)
        if request.error is not None:
            self.network.metadata.request_update()
            self._back_off(list(specs))
            return
        for tp, (code, found) in parse_response(request.response).items():
            if tp not in specs or not self.subscriptions.is_assigned(tp):
                continue
            state = self.subscriptions.state(tp)
            if state.reset is None or _RESET_TIMESTAMPS.get(state.reset) != specs[tp]:
                continue  # a seek or another reset superseded this one
            if code == ErrorCode.NONE and found is not None:
                self.subscriptions.seek(tp, found.offset)
            elif code == ErrorCode.NONE or code.retriable:
                self.network.metadata.request_update()
                self._back_off([tp])
            else:
                self._errors.append(KafkaError(code, f"resetting the position of {tp}"))
                self._back_off([tp])

    # --- closing ----------------------------------------------------------------------------------

    def close_sessions(self, deadline: float) -> None:
        """Close every fetch session on its broker (Kafka's ``Fetcher.close``), waiting at most until ``deadline``.

        The closing Fetches go to all brokers at once and ask for no wait;
        each is answered after any fetch its broker still holds for this
        consumer. A broker whose connection is gone is skipped: connecting anew
        could hold up the close on a broker that is down, and its session
        ends by eviction anyway. Best effort: never raises.
        """
        closing = [request for node, body in self.sessions.close_all().items()
                   if (request := self._send_session_close(node, body, deadline)) is not None]
        try:
            while any(not request.done for request in closing) and (remaining := deadline - self.clock()) > 0:
                self.network.poll(remaining)
        except Exception as exc:  # the consumer closes whatever the network does
            log.debug("closing fetch sessions: %s", exc)
        if any(not request.done for request in closing):
            log.debug("fetch sessions not all closed in time; their brokers evict them later")

    def _send_session_close(self, node: int, body: Any, deadline: float) -> InFlightRequest | None:
        if not self.network.is_connected(node):
            log.debug("fetch session %s at node %s left open: not connected", body.session_id, node)
            return None
        timeout = min(self.config.request_timeout_ms / 1000, deadline - self.clock())
        if timeout <= 0:
            return None
        try:
            return self.network.send(node, ApiKey.FETCH, body, timeout=timeout, context=body,
                                     callback=self._on_session_closed)
        except Exception as exc:  # the consumer closes whatever the network does
            log.debug("fetch session %s at node %s left open: %s", body.session_id, node, exc)
            return None

    @staticmethod
    def _on_session_closed(request: InFlightRequest) -> None:
        session_id = request.context.session_id
        if request.error is not None:
            log.debug("closing fetch session %s at node %s failed: %s", session_id, request.node_id, request.error)
        elif request.response.error_code != ErrorCode.NONE:
            log.debug("closing fetch session %s at node %s: %s", session_id, request.node_id,
                      ErrorCode.of(request.response.error_code).name)

    @property
    def resets_in_flight(self) -> bool:
        return bool(self._resets)

    @property
    def fetches_in_flight(self) -> bool:
        return bool(self._fetches)

