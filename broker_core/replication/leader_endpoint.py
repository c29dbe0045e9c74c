"""A follower's connection to the leader it replicates from (Kafka's ``RemoteLeaderEndPoint``).

One asyncio stream per fetcher, carrying the sans-IO
:class:`spate.protocol.ClientConnection`, on the broker's event loop: a
request never blocks the loop, it waits on the socket. The follower asks
three things, each as the broker ``node_id`` (``replica_id``), so the leader
treats it as a replica and not as a consumer:

* Fetch v11: the leader's batches from each partition's fetch offset, in an
  incremental fetch session (``spate.protocol.fetch_session_handler``): after the first
  full fetch only changed partitions are named, and the answer holds only
  partitions with news (a partition left out has nothing new);
* OffsetForLeaderEpoch v3: where a leader epoch ended on the leader, to find
  where this replica's log diverged (KIP-101/279);
* ListOffsets v5: the leader's log start or end offset, after
  OFFSET_OUT_OF_RANGE.

Records come back as they arrived on the wire (a memoryview of the
response frame) and are handed to the log unchanged. Anything that breaks
the exchange (refused connection, timeout, closed socket, a response that
does not parse) raises :class:`LeaderUnreachableError` and drops the
connection; the next request opens a new one.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Mapping

from broker_core.security.inter_broker import PLAINTEXT, InterBrokerSecurity
from spate.protocol import ApiKey, ClientConnection, ErrorCode, KafkaError, ProtocolError
from spate.protocol.fetch_session_handler import FetchSessionHandler
from spate.protocol.framing import SIZE_PREFIX, payload_size
from spate.protocol.messages.fetch import FetchRequest
from spate.protocol.messages.list_offsets import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, ListOffsetsRequest
from spate.protocol.messages.offset_for_leader_epoch import OffsetForLeaderEpochRequest
from spate.structs import TopicPartition, group_by_topic

logger = logging.getLogger(__name__)

FETCH_VERSION = 11
OFFSET_FOR_LEADER_EPOCH_VERSION = 3
LIST_OFFSETS_VERSION = 5
_SESSION_ERRORS = frozenset({
    ErrorCode.FETCH_SESSION_ID_NOT_FOUND, ErrorCode.INVALID_FETCH_SESSION_EPOCH, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR,
})  # fmt: skip
# The stream's buffer limit: large enough that a fetch answer of a few MiB arrives without the transport
# pausing and resuming reading every 128 KiB.
_STREAM_LIMIT = 1 << 22


class LeaderUnreachableError(Exception):
    """The leader could not be asked (connection, timeout or protocol failure); back off and retry."""


@dataclass(frozen=True, slots=True)
class BrokerEndpoint:
    """Where a broker listens for other brokers."""

    broker_id: int
    host: str
    port: int

    def __str__(self) -> str:
        return f"broker {self.broker_id} at {self.host}:{self.port}"


@dataclass(frozen=True, slots=True)
class FetchPosition:
    """What a follower asks of one partition in a Fetch."""

    fetch_offset: int
    current_leader_epoch: int
    log_start_offset: int


@dataclass(frozen=True, slots=True)
class FetchedPartition:
    """One partition of the leader's Fetch answer; ``records`` are the leader's batches, not decoded."""

    error: ErrorCode
    high_watermark: int = -1
    log_start_offset: int = -1
    records: memoryview | bytes = b""


@dataclass(frozen=True, slots=True)
class EpochEndOffset:
    """The leader's answer to "where did epoch E end?": the largest epoch at or below E and its end offset."""

    error: ErrorCode
    leader_epoch: int = -1
    end_offset: int = -1


@dataclass(frozen=True, slots=True)
class FetchSettings:
    """The Fetch limits of a follower (``replica.fetch.*``) and its request timeout."""

    max_wait_ms: int = 500
    min_bytes: int = 1
    max_bytes: int = 10 * 1024 * 1024
    partition_max_bytes: int = 1024 * 1024
    request_timeout_ms: int = 30_000


class RemoteLeaderEndpoint:
    """Requests to one leader over one connection, one at a time. Used on the broker's event loop only."""

    def __init__(self, endpoint: BrokerEndpoint, *, node_id: int, client_id: str, settings: FetchSettings,
                 security: InterBrokerSecurity = PLAINTEXT) -> None:
        self._security = security
        self.endpoint = endpoint
        self._node_id = node_id
        self._client_id = client_id
        self._settings = settings
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._codec: ClientConnection | None = None
        self._session: FetchSessionHandler[TopicPartition, FetchPosition] = FetchSessionHandler()

    # --- the three questions ---------------------------------------------------------------

    async def fetch(self, positions: Mapping[TopicPartition, FetchPosition]) -> dict[TopicPartition, FetchedPartition]:
        """The leader's answer for the partitions with news; a partition left out has nothing new."""
        settings = self._settings
        request = self._session.build(positions)
        body = FetchRequest(
            replica_id=self._node_id, max_wait_ms=settings.max_wait_ms, min_bytes=settings.min_bytes,
            max_bytes=settings.max_bytes, isolation_level=0, session_id=request.metadata.session_id,
            session_epoch=request.metadata.epoch, topics=self._fetch_topics(request.to_send),
            forgotten_topics_data=[
                FetchRequest.ForgottenTopic(topic=topic, partitions=[tp.partition for tp in tps])
                for topic, tps in group_by_topic(request.to_forget, key=lambda tp: tp).items()
            ],
            rack_id="",
        )
        try:
            # The leader may hold the request for max_wait_ms before it answers.
            response = await self._call(ApiKey.FETCH, FETCH_VERSION, body, extra_s=settings.max_wait_ms / 1000)
        except BaseException:
            self._session.handle_error()
            raise
        answered: dict[TopicPartition, FetchedPartition] = {}
        for topic in response.responses:
            for data in topic.partitions:
                answered[TopicPartition(topic.topic, data.partition_index)] = FetchedPartition(
                    ErrorCode.of(data.error_code), data.high_watermark, data.log_start_offset,
                    data.records if data.records is not None else b"",
                )
        error = ErrorCode.of(response.error_code)
        usable = self._session.handle_response(error, response.session_id, answered)
        if error in _SESSION_ERRORS:
            logger.info("%s answered the fetch session %s with %s; starting a new session", self.endpoint,
                        request.metadata, error.name)
            return {}  # the next fetch is a full one, at once
        if error is not ErrorCode.NONE:
            return {tp: FetchedPartition(error) for tp in positions}
        return answered if usable else {}

    def _fetch_topics(self, positions: Mapping[TopicPartition, FetchPosition]) -> list[Any]:
        partition_max_bytes = self._settings.partition_max_bytes
        Q = FetchRequest
        return [
            Q.FetchTopic(topic=topic, partitions=[
                Q.FetchPartition(partition=tp.partition, current_leader_epoch=pos.current_leader_epoch,
                                 fetch_offset=pos.fetch_offset, log_start_offset=pos.log_start_offset,
                                 partition_max_bytes=partition_max_bytes)
                for tp, pos in entries
            ])
            for topic, entries in group_by_topic(positions.items(), key=lambda item: item[0]).items()
        ]

    async def fetch_epoch_end_offsets(
        self, wanted: Mapping[TopicPartition, tuple[int, int]]
    ) -> dict[TopicPartition, EpochEndOffset]:
        """``wanted``: partition -> (current leader epoch, the epoch whose end is asked)."""
        Q = OffsetForLeaderEpochRequest
        topics = [
            Q.OffsetForLeaderTopic(topic=topic, partitions=[
                Q.OffsetForLeaderPartition(partition=tp.partition, current_leader_epoch=current, leader_epoch=epoch)
                for tp, (current, epoch) in entries
            ])
            for topic, entries in group_by_topic(wanted.items(), key=lambda item: item[0]).items()
        ]
        body = Q(replica_id=self._node_id, topics=topics)
        response = await self._call(ApiKey.OFFSET_FOR_LEADER_EPOCH, OFFSET_FOR_LEADER_EPOCH_VERSION, body)
        answered = {
            TopicPartition(topic.topic, p.partition): EpochEndOffset(ErrorCode.of(p.error_code), p.leader_epoch,
                                                                     p.end_offset)
            for topic in response.topics for p in topic.partitions
        }  # fmt: skip
        return {tp: answered.get(tp, EpochEndOffset(ErrorCode.UNKNOWN_SERVER_ERROR)) for tp in wanted}

    async def fetch_earliest_offset(self, tp: TopicPartition, current_leader_epoch: int) -> int:
        """The leader's log start offset; raises KafkaError with the leader's error code."""
        return await self._list_offset(tp, current_leader_epoch, EARLIEST_TIMESTAMP)

    async def fetch_latest_offset(self, tp: TopicPartition, current_leader_epoch: int) -> int:
        """The leader's end offset as it answers a replica; raises KafkaError with the leader's error code."""
        return await self._list_offset(tp, current_leader_epoch, LATEST_TIMESTAMP)

    async def _list_offset(self, tp: TopicPartition, current_leader_epoch: int, timestamp: int) -> int:
        Q = ListOffsetsRequest
        body = Q(replica_id=self._node_id, isolation_level=0, topics=[
            Q.ListOffsetsTopic(name=tp.topic, partitions=[
                Q.ListOffsetsPartition(partition_index=tp.partition, current_leader_epoch=current_leader_epoch,
                                       timestamp=timestamp),
            ]),
        ])  # fmt: skip
        response = await self._call(ApiKey.LIST_OFFSETS, LIST_OFFSETS_VERSION, body)
        for topic in response.topics:
            for p in topic.partitions:
                if topic.name == tp.topic and p.partition_index == tp.partition:
                    if p.error_code != ErrorCode.NONE:
                        raise KafkaError(p.error_code, f"ListOffsets for {tp} on {self.endpoint}")
                    return p.offset
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"ListOffsets from {self.endpoint} left out {tp}")

    # --- the connection --------------------------------------------------------------------

    async def _call(self, api_key: ApiKey, version: int, body: Any, *, extra_s: float = 0.0) -> Any:
        timeout_s = self._settings.request_timeout_ms / 1000 + extra_s
        try:
            return await asyncio.wait_for(self._exchange(api_key, version, body), timeout_s)
        except (OSError, EOFError, asyncio.TimeoutError, ProtocolError) as exc:
            self.close()
            raise LeaderUnreachableError(f"{ApiKey.name_of(api_key)} to {self.endpoint} failed: {exc!r}") from exc
        except BaseException:
            # Cancelled (or worse) half-way: the connection may hold half an exchange.
            self.close()
            raise

    async def _exchange(self, api_key: ApiKey, version: int, body: Any) -> Any:
        if self._writer is None:
            endpoint = self.endpoint
            self._reader, self._writer = await self._security.open_connection(endpoint.host, endpoint.port,
                                                                              limit=_STREAM_LIMIT)
            self._codec = ClientConnection(self._client_id)
        reader, writer, codec = self._reader, self._writer, self._codec
        _, frame = codec.send_request(api_key, version, body)
        writer.write(frame)
        await writer.drain()
        # Whole frames straight off the stream: a fetch answer is copied once, not chunk by chunk.
        size = payload_size(await reader.readexactly(SIZE_PREFIX))
        return codec.response_from_frame(await reader.readexactly(size)).body

    @property
    def connected(self) -> bool:
        return self._writer is not None

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = self._codec = None
