"""Which fetch context a Fetch request gets (Kafka's ``FetchManager.newContext``), and the contexts.

* a **full** request (epoch 0 or -1) first closes the session it names, if
  any. At epoch -1 it is answered without a session (**sessionless**); at
  epoch 0 it is read as sent and its answer opens a new session if the cache
  has (or can make) room: the answer's ``session_id`` says which, 0 if none.
* an **incremental** request (epoch > 0) names a session: unknown id is
  FETCH_SESSION_ID_NOT_FOUND; an epoch other than the one the session expects
  is INVALID_FETCH_SESSION_EPOCH; a session opened with topic names used by a
  request with topic ids (fetch v13+), or the other way round, is
  FETCH_SESSION_TOPIC_ID_ERROR. Otherwise the request's partitions are added
  to (or update) the session, its forgotten topics leave it, and every
  partition of the session is read; the answer carries only the partitions
  with news (see ``session``). A request that empties the session closes it
  and is answered without a session.

A session error is a top-level ``error_code`` with no partitions and session
id 0; the fetcher starts again with a full request. Sessions opened by
followers (``replica_id`` >= 0) are privileged in the cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from broker_core.server.fetch_session.cache import FetchSessionCache
from broker_core.server.fetch_session.session import CachedPartition, FetchSession, PartitionKey
from spate.protocol.errors import ErrorCode
from spate.protocol.fetch_session import FINAL_EPOCH, INVALID_SESSION_ID, FetchMetadata, next_epoch
from spate.protocol.messages.fetch import FetchRequest, FetchResponse

TOPIC_IDS_FROM_VERSION = 13
SLOTS_PROPERTY = "max.incremental.fetch.session.cache.slots"
EVICTION_MS_PROPERTY = "min.incremental.fetch.session.eviction.ms"
FULL, INCREMENTAL, SESSIONLESS, SESSION_ERROR = "full", "incremental", "sessionless", "session_error"


class FetchContext:
    """What a request reads and how its answer is shaped; built once per request."""

    kind = SESSIONLESS

    def __init__(self, topics: list[Any]) -> None:
        self._topics = topics

    def topics_to_read(self) -> list[Any]:
        return self._topics

    def update_and_generate_response(self, response: Any) -> Any:
        response.session_id = INVALID_SESSION_ID
        return response


class SessionErrorContext(FetchContext):
    kind = SESSION_ERROR

    def __init__(self, error: ErrorCode) -> None:
        super().__init__([])
        self.error = error

    def update_and_generate_response(self, response: Any) -> Any:
        return FetchResponse(throttle_time_ms=0, error_code=self.error, session_id=INVALID_SESSION_ID, responses=[])


class FullFetchContext(FetchContext):
    kind = FULL

    def __init__(self, topics: list[Any], cache: FetchSessionCache, now_ms: int, privileged: bool,
                 uses_topic_ids: bool) -> None:
        super().__init__(topics)
        self._cache, self._now_ms = cache, now_ms
        self._privileged, self._uses_topic_ids = privileged, uses_topic_ids

    def update_and_generate_response(self, response: Any) -> Any:
        partitions = sum(len(t.partitions) for t in response.responses)
        response.session_id = self._cache.maybe_create_session(
            self._now_ms, self._privileged, partitions, self._uses_topic_ids, lambda: self._cached(response),
        )
        return response

    def _cached(self, response: Any) -> dict[PartitionKey, CachedPartition]:
        use_ids = self._uses_topic_ids
        answered = {
            (t.topic_id if use_ids else t.topic, data.partition_index): data
            for t in response.responses for data in t.partitions
        }
        cached: dict[PartitionKey, CachedPartition] = {}
        for topic in self._topics:
            for wanted in topic.partitions:
                key = (topic.topic_id if use_ids else topic.topic, wanted.partition)
                data = answered.get(key)
                entry = CachedPartition(topic.topic, topic.topic_id, wanted)
                if data is not None:
                    entry.high_watermark, entry.log_start_offset = data.high_watermark, data.log_start_offset
                cached[key] = entry
        return cached


class IncrementalFetchContext(FetchContext):
    kind = INCREMENTAL

    def __init__(self, session: FetchSession, request_epoch: int) -> None:
        super().__init__(_session_topics(session))
        self._session = session
        self._expected_epoch = next_epoch(request_epoch)

    def update_and_generate_response(self, response: Any) -> Any:
        session = self._session
        if session.epoch != self._expected_epoch:
            # Another request of the session got in between (a duplicate request): neither may be trusted.
            return FetchResponse(throttle_time_ms=0, error_code=ErrorCode.INVALID_FETCH_SESSION_EPOCH,
                                 session_id=session.id, responses=[])
        kept_topics = []
        for topic in response.responses:
            kept = []
            for data in topic.partitions:
                key = session.key(topic.topic, topic.topic_id, data.partition_index)
                cached = session.partitions.get(key)
                if cached is None or cached.must_respond(data):
                    kept.append(data)
                    # Answered partitions are read last next time, so a full answer does not starve the rest.
                    session.partitions[key] = session.partitions.pop(key, cached)
            if kept:
                topic.partitions = kept
                kept_topics.append(topic)
        response.responses = kept_topics
        response.session_id = session.id
        return response


def _session_topics(session: FetchSession) -> list[Any]:
    """The session's partitions as request topics, in the session's order (runs of one topic grouped)."""
    topics: list[Any] = []
    last_key: Any = None
    for (topic_key, _), cached in session.partitions.items():
        if topic_key != last_key or not topics:
            topics.append(FetchRequest.FetchTopic(topic=cached.topic, topic_id=cached.topic_id, partitions=[]))
            last_key = topic_key
        topics[-1].partitions.append(cached.request)
    return topics


@dataclass
class FetchManager:
    cache: FetchSessionCache
    clock_ms: Callable[[], int]
    # Requests by context kind since start, for the metrics.
    requests: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        (FULL, INCREMENTAL, SESSIONLESS, SESSION_ERROR), 0))

    @classmethod
    def from_config(cls, config: Any, clock_ms: Callable[[], int]) -> FetchManager:
        """``max.incremental.fetch.session.cache.slots`` sessions, evictable after
        ``min.incremental.fetch.session.eviction.ms``."""
        cache = FetchSessionCache(max_entries=config.get_int(SLOTS_PROPERTY),
                                  eviction_ms=config.get_int(EVICTION_MS_PROPERTY))
        return cls(cache, clock_ms)

    def new_context(self, body: Any, version: int, *, follower: bool) -> FetchContext:
        context = self._new_context(body, version, follower)
        self.requests[context.kind] += 1
        return context

    def _new_context(self, body: Any, version: int, follower: bool) -> FetchContext:
        metadata = FetchMetadata(getattr(body, "session_id", INVALID_SESSION_ID),
                                 getattr(body, "session_epoch", FINAL_EPOCH))
        uses_topic_ids = version >= TOPIC_IDS_FROM_VERSION
        if metadata.is_full:
            if metadata.session_id != INVALID_SESSION_ID:
                self.cache.remove(metadata.session_id)
            if metadata.epoch == FINAL_EPOCH:
                return FetchContext(body.topics)
            return FullFetchContext(body.topics, self.cache, self.clock_ms(), follower, uses_topic_ids)
        session = self.cache.get(metadata.session_id)
        if session is None:
            return SessionErrorContext(ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != metadata.epoch:
            return SessionErrorContext(ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        if session.uses_topic_ids != uses_topic_ids:
            return SessionErrorContext(ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
        session.update(body.topics, getattr(body, "forgotten_topics_data", None) or ())
        if not session.partitions:
            self.cache.remove(session.id)
            return FetchContext(body.topics)
        self.cache.touch(session, self.clock_ms())
        session.epoch = next_epoch(session.epoch)
        return IncrementalFetchContext(session, metadata.epoch)
