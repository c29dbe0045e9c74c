"""Metadata answers' topic entries, encoded once and sent again until what they were built from changes.

A Metadata answer's entry for a topic lists every partition: at 10,000
partitions, building and encoding it costs tens of milliseconds, while the
cluster rarely changes between two requests. Kafka's brokers answer from
an immutable metadata snapshot; Spate's metadata views hand out one
immutable :class:`~broker_core.server.metadata_view.TopicMetadata` per
topic and replace it whenever anything about the topic changes (a leader,
an ISR, new partitions, a deletion, a new topic id). So an entry is kept
with a weak reference to the snapshot it was built from, and served only
while the view still hands out that very object: any change to the topic
is a miss, and nothing needs to be told to invalidate.

What else an entry depends on is checked or keyed too:

* the brokers reachable on the request's listener (a leader or replica
  outside them changes error codes and, in v0, the replica lists): the set
  is stored with the entry and compared on every look-up;
* whether brokers outside that set are alive on another listener
  (LISTENER_NOT_FOUND from v6): the answers the entry relied on are
  stored with it and asked again on look-up;
* the request's API version, its listener, and the topic's authorized
  operations when the request asks for them: part of the key. Whether the
  caller may see the topic at all is decided before the look-up; error
  entries are never cached.

Entries are kept least recently used first, up to ``max_bytes`` of encoded
answers, so topics deleted or no longer asked about age out. Not thread
safe: the broker's event loop is its only user.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Mapping

from broker_core.server.metadata_view import TopicMetadata
from spate.protocol.pre_encoded import PreEncoded

DEFAULT_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class TopicEntryKey:
    """Which answer an entry is: the topic's, for one API version, listener and set of authorized operations."""

    topic: str
    api_version: int
    listener: str
    authorized_operations: int


@dataclass(frozen=True, slots=True)
class _Entry:
    snapshot: weakref.ref[TopicMetadata]
    reachable: frozenset[int]
    alive_answers: tuple[tuple[int, bool], ...]
    answer: PreEncoded


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    evictions: int = 0


class MetadataAnswerCache:
    """Encoded topic entries by :class:`TopicEntryKey`, each valid for one topic snapshot and set of brokers."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must not be negative, got {max_bytes}")
        self.max_bytes = max_bytes
        self.stats = CacheStats()
        self._entries: OrderedDict[TopicEntryKey, _Entry] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def get(self, key: TopicEntryKey, snapshot: TopicMetadata, reachable: frozenset[int],
            is_alive: Callable[[int], bool]) -> PreEncoded | None:
        """The entry built from ``snapshot`` with the same brokers, or None (a miss)."""
        entry = self._entries.get(key)
        if entry is None or not _still_valid(entry, snapshot, reachable, is_alive):
            self.stats.misses += 1
            return None
        self._entries.move_to_end(key)
        self.stats.hits += 1
        return entry.answer

    def put(self, key: TopicEntryKey, snapshot: TopicMetadata, reachable: frozenset[int],
            alive_answers: Mapping[int, bool], answer: PreEncoded) -> PreEncoded:
        """Keep ``answer``, built from ``snapshot`` with the ``reachable`` brokers and the ``alive_answers`` it
        asked for; returns it."""
        self._drop(key)
        if len(answer) > self.max_bytes:
            return answer
        self._entries[key] = _Entry(weakref.ref(snapshot), reachable, tuple(alive_answers.items()), answer)
        self._bytes += len(answer)
        while self._bytes > self.max_bytes:
            oldest = next(iter(self._entries))
            self._drop(oldest)
            self.stats.evictions += 1
        return answer

    def _drop(self, key: TopicEntryKey) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= len(entry.answer)


def _still_valid(entry: _Entry, snapshot: TopicMetadata, reachable: frozenset[int],
                 is_alive: Callable[[int], bool]) -> bool:
    if entry.snapshot() is not snapshot or entry.reachable != reachable:
        return False
    return all(is_alive(broker_id) == alive for broker_id, alive in entry.alive_answers)
