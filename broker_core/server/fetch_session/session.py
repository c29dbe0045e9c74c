"""One fetch session: the partitions a fetcher asked for, and what it was last told of each.

A session remembers, per partition, the fetcher's last request (fetch
offset, leader epochs, log start, size limit), so an incremental request
needs to name only the partitions whose request changed. It also remembers
the high watermark and log start offset of the last answer, so an answer
carries a partition only when something changed: records, the high
watermark, the log start offset, an error or a diverging epoch (Kafka's
``CachedPartition.maybeUpdateResponseData``). After an error the remembered
high watermark is -1, so the partition is sent again once the error clears.

Partitions are kept in a dict whose order is the order they are read in; a
partition that returned data moves to the end, so a size-limited answer does
not starve the partitions behind it.

Sessions opened by fetch v13+ name topics by id (``uses_topic_ids``); the key
of a partition is then ``(topic_id, partition)``, otherwise
``(topic, partition)``. Event loop only: no locks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable, Iterable

PartitionKey = tuple[Hashable, int]


@dataclass(slots=True)
class CachedPartition:
    topic: str
    topic_id: Any
    # The FetchPartition of the request that last named this partition.
    request: Any
    high_watermark: int = -1
    log_start_offset: int = -1

    def must_respond(self, data: Any, update: bool = True) -> bool:
        """Whether the answer must carry ``data``; with ``update`` remember what it tells the fetcher."""
        respond = bool(_records_size(data.records))
        if data.high_watermark != self.high_watermark:
            respond = True
            if update:
                self.high_watermark = data.high_watermark
        if data.log_start_offset != self.log_start_offset:
            respond = True
            if update:
                self.log_start_offset = data.log_start_offset
        if data.error_code != 0:
            respond = True
            if update:
                self.high_watermark = -1
        if getattr(data, "preferred_read_replica", -1) >= 0:
            respond = True
        diverging = getattr(data, "diverging_epoch", None)
        if diverging is not None and diverging.epoch >= 0:
            respond = True
        return respond


def _records_size(records: Any) -> int:
    if records is None:
        return 0
    size = getattr(records, "size", None)  # a FileRangeRef
    return size if isinstance(size, int) else len(records)


@dataclass(frozen=True, slots=True)
class SessionUpdate:
    """What an incremental request changed in a session."""

    added: int
    updated: int
    removed: int


@dataclass(slots=True, eq=False)
class FetchSession:
    id: int
    # Opened by a follower: only other followers may evict it while it is young.
    privileged: bool
    uses_topic_ids: bool
    creation_ms: int
    last_used_ms: int
    # The epoch the next incremental request must carry.
    epoch: int
    partitions: dict[PartitionKey, CachedPartition] = field(default_factory=dict)
    # The size the cache last accounted this session at (-1: not yet).
    cached_size: int = -1

    def __repr__(self) -> str:
        return (f"FetchSession(id={self.id}, privileged={self.privileged}, partitions={len(self.partitions)}, "
                f"epoch={self.epoch})")

    @property
    def size(self) -> int:
        return len(self.partitions)

    def key(self, topic: str, topic_id: Any, partition: int) -> PartitionKey:
        return (topic_id if self.uses_topic_ids else topic, partition)

    def update(self, topics: Iterable[Any], forgotten: Iterable[Any]) -> SessionUpdate:
        """Apply an incremental request: its partitions are added or replace their requests; forgotten ones
        leave."""
        added = updated = removed = 0
        for topic in topics:
            for wanted in topic.partitions:
                key = self.key(topic.topic, topic.topic_id, wanted.partition)
                cached = self.partitions.get(key)
                if cached is None:
                    self.partitions[key] = CachedPartition(topic.topic, topic.topic_id, wanted)
                    added += 1
                else:
                    cached.request = wanted
                    updated += 1
        for topic in forgotten:
            for index in topic.partitions:
                if self.partitions.pop(self.key(topic.topic, topic.topic_id, index), None) is not None:
                    removed += 1
        return SessionUpdate(added, updated, removed)
