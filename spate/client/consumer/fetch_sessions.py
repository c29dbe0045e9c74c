"""The consumer's incremental fetch sessions (KIP-227): one per broker connection it fetches from.

Each broker the consumer fetches from gets a
:class:`~spate.protocol.fetch_session_handler.FetchSessionHandler`. The
first Fetch on a connection names every partition wanted from that broker
and asks for a session; once the broker opens one, a Fetch names only the
partitions whose position (fetch offset, leader epoch) changed or that
joined, and lists as forgotten the ones no longer wanted: paused, revoked or
unassigned, moved to another leader, or holding buffered data (as the Java
client does; they rejoin at their new position once drained). The broker
answers only partitions with news, so an idle round of many quiet
partitions costs a few dozen bytes each way instead of tens of bytes per
partition.

A new connection (the old one broke, or the broker restarted) closes the
session with the next full fetch, as does any session error; a broker
without room answers session 0 and keeps getting full fetches. Fetch
versions below 7 have no sessions: every Fetch then names every partition.
The client's own Fetch is v11 at most, where topics go by name.

When the consumer closes, each session still open is closed on its broker
(as the Java client does): a Fetch naming the session at the final epoch
(-1) with no partitions, which the broker answers at once as a sessionless
fetch after freeing the session's cache slot, rather than keeping it until
``min.incremental.fetch.session.eviction.ms`` lets it be evicted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from spate.client.consumer.consumer_config import ConsumerConfig
from spate.protocol import ErrorCode
from spate.protocol.fetch_session import FINAL_EPOCH, INVALID_SESSION_ID, LEGACY, FetchMetadata
from spate.protocol.fetch_session_handler import FetchSessionHandler
from spate.protocol.messages.fetch import FetchRequest
from spate.structs import TopicPartition, group_by_topic

SESSIONS_FROM_VERSION = 7
SESSION_ERRORS = frozenset({
    ErrorCode.FETCH_SESSION_ID_NOT_FOUND, ErrorCode.INVALID_FETCH_SESSION_EPOCH, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR,
})  # fmt: skip


@dataclass(frozen=True, slots=True)
class FetchPosition:
    """What a Fetch asks of one partition; a partition is named again when this changes."""

    fetch_offset: int
    current_leader_epoch: int


@dataclass(frozen=True, slots=True)
class PreparedFetch:
    """One Fetch to one broker: the request and every partition its answer may carry, at its position."""

    node: int
    body: Any
    positions: dict[TopicPartition, FetchPosition]
    metadata: FetchMetadata


@dataclass(slots=True)
class _Session:
    # The connection the session was opened on: a different one means the old one was lost.
    connection: object
    handler: FetchSessionHandler[TopicPartition, FetchPosition] = field(default_factory=FetchSessionHandler)


class FetchSessions:
    def __init__(self, config: ConsumerConfig) -> None:
        self.config = config
        self._sessions: dict[int, _Session] = {}

    def prepare(
        self, node: int, connection: object, version: int, positions: Mapping[TopicPartition, FetchPosition]
    ) -> PreparedFetch:
        """The Fetch for ``positions`` (every partition wanted from ``node`` now, in the order to ask them)."""
        if version < SESSIONS_FROM_VERSION:
            self._sessions.pop(node, None)
            return PreparedFetch(node, self._body(LEGACY, positions, []), dict(positions), LEGACY)
        session = self._sessions.get(node)
        if session is None:
            session = self._sessions[node] = _Session(connection)
        elif session.connection is not connection:
            session.handler.handle_error()
            session.connection = connection
        request = session.handler.build(positions)
        return PreparedFetch(node, self._body(request.metadata, request.to_send, request.to_forget),
                             dict(positions), request.metadata)

    def handle_response(self, fetch: PreparedFetch, response: Any) -> bool:
        """Take the broker's answer to ``fetch``; False when it is not to be used (the next Fetch is a full one)."""
        session = self._sessions.get(fetch.node)
        if fetch.metadata == LEGACY or session is None:
            return True
        answered = (TopicPartition(t.topic, p.partition_index) for t in response.responses for p in t.partitions)
        return session.handler.handle_response(ErrorCode.of(response.error_code), response.session_id, answered)

    def handle_error(self, node: int) -> None:
        """The Fetch to ``node`` failed on the way: its session is closed with the next full fetch."""
        session = self._sessions.get(node)
        if session is not None:
            session.handler.handle_error()

    def session_id(self, node: int) -> int:
        """The session the next Fetch to ``node`` names (0: none)."""
        session = self._sessions.get(node)
        return 0 if session is None else session.handler.next_metadata.session_id

    def close_all(self) -> dict[int, Any]:
        """The Fetch that closes each open session, by node; every session is forgotten.

        Each names its session at the final epoch, no partitions, and asks
        the broker not to wait (``max_wait_ms`` 0): there is nothing to read.
        """
        bodies = {}
        for node, session in self._sessions.items():
            session_id = session.handler.next_metadata.session_id
            if session_id != INVALID_SESSION_ID:
                bodies[node] = self._body(FetchMetadata(session_id, FINAL_EPOCH), {}, [], max_wait_ms=0)
        self._sessions.clear()
        return bodies

    def _body(self, metadata: FetchMetadata, positions: Mapping[TopicPartition, FetchPosition],
              forgotten: list[TopicPartition], *, max_wait_ms: int | None = None) -> Any:
        config = self.config
        Q = FetchRequest
        topics = [
            Q.FetchTopic(topic=topic, partitions=[
                Q.FetchPartition(partition=tp.partition, current_leader_epoch=position.current_leader_epoch,
                                 fetch_offset=position.fetch_offset, log_start_offset=-1,
                                 partition_max_bytes=config.max_partition_fetch_bytes)
                for tp, position in entries
            ])
            for topic, entries in group_by_topic(positions.items(), key=lambda item: item[0]).items()
        ]  # fmt: skip
        return Q(
            replica_id=-1,
            max_wait_ms=config.fetch_max_wait_ms if max_wait_ms is None else max_wait_ms,
            min_bytes=config.fetch_min_bytes,
            max_bytes=config.fetch_max_bytes,
            isolation_level=config.isolation,
            session_id=metadata.session_id,
            session_epoch=metadata.epoch,
            topics=topics,
            forgotten_topics_data=[
                Q.ForgottenTopic(topic=topic, partitions=[tp.partition for tp in tps])
                for topic, tps in group_by_topic(forgotten, key=lambda tp: tp).items()
            ],
            rack_id="",
        )
