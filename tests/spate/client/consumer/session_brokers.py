"""Scripted brokers that serve fetch sessions (KIP-227) the way a real broker does, and record every Fetch.

Each broker keeps its sessions: a full fetch at epoch 0 opens one (unless
``refuse_sessions``), an incremental fetch must name a known session at the
epoch it expects (else FETCH_SESSION_ID_NOT_FOUND / INVALID_FETCH_SESSION_EPOCH)
and updates it with the partitions named and forgotten. A full answer carries
every partition asked for; an incremental one only partitions with records.
A Fetch closing a session (the final epoch, naming it) removes it and is
recorded in ``closes`` rather than ``fetches``; a node in ``silent_closes``
never answers one. Partitions live in ``log`` (values by offset) and are led by the node
``leaders`` says; another node answers NOT_LEADER_OR_FOLLOWER.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from spate.protocol import ADVERTISED_VERSIONS, ApiKey, ErrorCode, VersionRange
from spate.protocol.messages.fetch import FetchResponse
from spate.protocol.messages.metadata import MetadataResponse
from spate.records import Record, build_batch
from tests.spate.client.fake_broker import CLOSE, SILENT, FakeBroker

Key = tuple[str, int]


@dataclass(frozen=True)
class SeenFetch:
    """One Fetch as a broker received it."""

    node: int
    version: int
    session_id: int
    epoch: int
    named: dict[Key, int]
    forgotten: frozenset[Key]
    max_wait_ms: int = 500

    @property
    def full(self) -> bool:
        return self.epoch in (0, -1)


@dataclass
class ScriptedSession:
    partitions: dict[Key, int]
    epoch: int = 1


@dataclass
class ScriptedCluster:
    topic: str
    partitions: int
    nodes: int = 1
    versions: Mapping[ApiKey, VersionRange] = field(default_factory=lambda: ADVERTISED_VERSIONS)
    refuse_sessions: bool = False

    def __post_init__(self) -> None:
        self.log: dict[Key, list[bytes]] = {(self.topic, p): [] for p in range(self.partitions)}
        self.leaders: dict[Key, int] = {key: 0 for key in self.log}
        self.fetches: list[SeenFetch] = []
        self.closes: list[SeenFetch] = []
        self.silent_closes: set[int] = set()
        # Fetches to answer with a session error, or by dropping the connection, as they come.
        self.session_errors: list[ErrorCode] = []
        self.close_next_fetch = False
        # Open sessions by id (ids are unique across the brokers).
        self.sessions: dict[int, ScriptedSession] = {}
        self._ids = itertools.count(100)
        self._lock = threading.Lock()
        self.brokers = [FakeBroker(versions=self.versions) for _ in range(self.nodes)]
        for node, broker in enumerate(self.brokers):
            broker.handler = lambda key, version, body, node=node: self._answer(node, key, version, body)

    @property
    def bootstrap(self) -> str:
        return self.brokers[0].bootstrap

    def stop(self) -> None:
        for broker in self.brokers:
            broker.stop()

    def append(self, partition: int, *values: bytes) -> None:
        with self._lock:
            self.log[(self.topic, partition)].extend(values)

    def move_leader(self, partition: int, node: int) -> None:
        with self._lock:
            self.leaders[(self.topic, partition)] = node

    def fetches_since(self, count: int, node: int | None = None) -> list[SeenFetch]:
        with self._lock:
            return [f for f in self.fetches[count:] if node is None or f.node == node]

    def open_sessions(self) -> dict[int, set[Key]]:
        """The partitions of each session open now, by session id."""
        with self._lock:
            return {session_id: set(session.partitions) for session_id, session in self.sessions.items()}

    def _answer(self, node: int, key: ApiKey, version: int, body: Any) -> Any:
        if key == ApiKey.METADATA:
            return self._metadata()
        if key != ApiKey.FETCH:
            return SILENT
        with self._lock:
            if self.close_next_fetch:
                self.close_next_fetch = False
                return CLOSE
            response = self._fetch(node, version, body)
        if response is None:
            return SILENT
        if not response.responses:
            time.sleep(min(body.max_wait_ms, 50) / 1000)  # nothing new: hold the fetch as a broker would
        return response

    def _fetch(self, node: int, version: int, body: Any) -> Any:
        named = {(t.topic, p.partition): p.fetch_offset for t in body.topics for p in t.partitions}
        forgotten = frozenset((t.topic, p) for t in body.forgotten_topics_data or () for p in t.partitions)
        seen = SeenFetch(node, version, body.session_id, body.session_epoch, named, forgotten, body.max_wait_ms)
        if seen.epoch == -1 and seen.session_id:
            return self._close(seen)
        self.fetches.append(seen)
        if self.session_errors and not seen.full:
            return FetchResponse(throttle_time_ms=0, error_code=self.session_errors.pop(0), session_id=0, responses=[])
        if seen.full:
            self.sessions.pop(seen.session_id, None)
            session_id = 0
            if seen.epoch == 0 and version >= 7 and not self.refuse_sessions:
                session_id = next(self._ids)
                self.sessions[session_id] = ScriptedSession(dict(named))
            return self._response(node, named, session_id, incremental=False)
        session = self.sessions.get(seen.session_id)
        if session is None:
            return FetchResponse(throttle_time_ms=0, error_code=ErrorCode.FETCH_SESSION_ID_NOT_FOUND, responses=[])
        if session.epoch != seen.epoch:
            return FetchResponse(throttle_time_ms=0, error_code=ErrorCode.INVALID_FETCH_SESSION_EPOCH, responses=[])
        session.epoch += 1
        session.partitions.update(named)
        for key in forgotten:
            session.partitions.pop(key, None)
        return self._response(node, session.partitions, seen.session_id, incremental=True)

    def _close(self, seen: SeenFetch) -> Any:
        self.closes.append(seen)
        if seen.node in self.silent_closes:
            return None
        self.sessions.pop(seen.session_id, None)
        return self._response(seen.node, seen.named, 0, incremental=False)

    def _response(self, node: int, partitions: Mapping[Key, int], session_id: int, incremental: bool) -> Any:
        F = FetchResponse
        topics: dict[str, list] = {}
        for (topic, index), offset in partitions.items():
            values = self.log[(topic, index)]
            if self.leaders[(topic, index)] != node:
                data = F.PartitionData(partition_index=index, error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
                                       high_watermark=-1, last_stable_offset=-1, log_start_offset=-1, records=b"")
            else:
                records = [Record(o, 1_000, None, values[o]) for o in range(offset, len(values))]
                if incremental and not records:
                    continue
                data = F.PartitionData(
                    partition_index=index, error_code=0, high_watermark=len(values), last_stable_offset=len(values),
                    log_start_offset=0, aborted_transactions=None,
                    records=build_batch(records, base_offset=offset) if records else b"",
                )
            topics.setdefault(topic, []).append(data)
        return F(throttle_time_ms=0, error_code=0, session_id=session_id,
                 responses=[F.FetchableTopicResponse(topic=t, partitions=p) for t, p in topics.items()])

    def _metadata(self) -> Any:
        M = MetadataResponse
        with self._lock:
            partitions = [
                M.MetadataResponsePartition(error_code=0, partition_index=index, leader_id=leader, leader_epoch=0,
                                            replica_nodes=[leader], isr_nodes=[leader])
                for (_, index), leader in sorted(self.leaders.items())
            ]
        return M(
            brokers=[M.MetadataResponseBroker(node_id=n, host="127.0.0.1", port=b.port)
                     for n, b in enumerate(self.brokers)],
            controller_id=0,
            topics=[M.MetadataResponseTopic(error_code=0, name=self.topic, is_internal=False, partitions=partitions)],
        )
