"""The broker's fetch sessions (Kafka's ``FetchSessionCache``), at most
``max.incremental.fetch.session.cache.slots`` of them.

When the cache is full, a new session may take the place of an existing one
(Kafka's eviction rules, ``min.incremental.fetch.session.eviction.ms`` being
the eviction time):

1. the least recently used session, when it has not been used for longer
   than the eviction time (a stale session) — always;
2. otherwise the least valuable *evictable* session, if it is not more
   valuable than the new one. Value orders by (privileged, partitions, id):
   a follower's session outranks any consumer's, and more partitions outrank
   fewer. A consumer's session becomes evictable by followers as soon as it
   is used; any session becomes evictable by consumers once it is older than
   the eviction time (checked when it is used, as Kafka does).

No slot free and nothing to evict: the fetch is answered without a session
(session id 0) and the fetcher keeps sending full requests.

Eviction scans the sessions (a few thousand at most), which happens only when
the cache is full. Time comes in as ``now_ms``; session ids from the random
source given. Event loop only: no locks.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Iterator

from broker_core.server.fetch_session.session import CachedPartition, FetchSession, PartitionKey
from spate.protocol.fetch_session import INITIAL_EPOCH, INVALID_SESSION_ID, next_epoch

DEFAULT_SLOTS = 1000
DEFAULT_EVICTION_MS = 120_000
_MAX_SESSION_ID = 0x7FFFFFFF


@dataclass(frozen=True, slots=True, order=True)
class EvictableKey:
    """How much a session is worth keeping: a session is evicted only for one at least as valuable."""

    privileged: bool
    size: int
    id: int


@dataclass(slots=True)
class _Accounting:
    """What the cache recorded of a session when it was last used."""

    key: EvictableKey
    by_all: bool
    by_privileged: bool


class FetchSessionCache:
    def __init__(self, max_entries: int = DEFAULT_SLOTS, eviction_ms: int = DEFAULT_EVICTION_MS,
                 rng: random.Random | None = None) -> None:
        self.max_entries = max_entries
        self.eviction_ms = eviction_ms
        self._rng = rng or random.Random()
        self._sessions: dict[int, FetchSession] = {}
        self._accounting: dict[int, _Accounting] = {}
        self.total_partitions = 0
        # Sessions removed to make room for others, since start (Kafka's IncrementalFetchSessionEvictionsPerSec).
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._sessions)

    def __iter__(self) -> Iterator[FetchSession]:
        return iter(self._sessions.values())

    def get(self, session_id: int) -> FetchSession | None:
        return self._sessions.get(session_id)

    def maybe_create_session(self, now_ms: int, privileged: bool, size: int, uses_topic_ids: bool,
                             partitions: Callable[[], dict[PartitionKey, CachedPartition]]) -> int:
        """A new session's id, or ``INVALID_SESSION_ID`` when there is no room for it."""
        if self.max_entries <= 0:
            return INVALID_SESSION_ID
        if len(self._sessions) >= self.max_entries and not self.try_evict(privileged, size, now_ms):
            return INVALID_SESSION_ID
        session = FetchSession(
            id=self._new_session_id(), privileged=privileged, uses_topic_ids=uses_topic_ids, creation_ms=now_ms,
            last_used_ms=now_ms, epoch=next_epoch(INITIAL_EPOCH), partitions=partitions(),
        )
        self._sessions[session.id] = session
        self.touch(session, now_ms)
        return session.id

    def try_evict(self, privileged: bool, size: int, now_ms: int) -> bool:
        """Remove one session to make room for a new one of ``size`` partitions (the rules above)."""
        if not self._sessions:
            return False
        oldest = min(self._sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - oldest.last_used_ms > self.eviction_ms:
            return self._evict(oldest)
        candidates = [
            (acc.key, session_id) for session_id, acc in self._accounting.items()
            if (acc.by_privileged if privileged else acc.by_all)
        ]
        if not candidates:
            return False
        least_key, least_id = min(candidates)
        if EvictableKey(privileged, size, 0) < least_key:
            return False
        return self._evict(self._sessions[least_id])

    def _evict(self, session: FetchSession) -> bool:
        self.remove(session.id)
        self.evictions += 1
        return True

    def remove(self, session_id: int) -> FetchSession | None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            self._accounting.pop(session_id, None)
            self.total_partitions -= max(session.cached_size, 0)
        return session

    def touch(self, session: FetchSession, now_ms: int) -> None:
        """The session was used: note the time, its size, and whom it may now be evicted by."""
        session.last_used_ms = now_ms
        if session.cached_size >= 0:
            self.total_partitions -= session.cached_size
        session.cached_size = session.size
        self.total_partitions += session.cached_size
        old_enough = now_ms - session.creation_ms > self.eviction_ms
        self._accounting[session.id] = _Accounting(
            key=EvictableKey(session.privileged, session.cached_size, session.id),
            by_all=old_enough,
            by_privileged=old_enough or not session.privileged,
        )

    def _new_session_id(self) -> int:
        while True:
            session_id = self._rng.randint(1, _MAX_SESSION_ID - 1)
            if session_id not in self._sessions:
                return session_id
