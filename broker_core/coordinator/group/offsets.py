"""Committed offsets: what a group stores per partition, and when it expires.

Expiry follows Kafka (KIP-211). An offset expires once ``offsets.retention``
has passed since its base time:

* an explicit expire timestamp (OffsetCommit v2-v4 with a retention time)
  wins outright;
* a group that is Empty counts from the moment it became empty, so offsets
  of a group that comes back within the retention are never lost;
* a consumer group that is not empty keeps offsets of the topics it is
  subscribed to and counts others from their commit time;
* any other non-empty group keeps every offset.

Each offset also remembers where its record sits in ``__consumer_offsets``.
That position orders commits: a transaction's offsets become visible when
it commits, but only over offsets whose records were written before its own
(a plain commit made while the transaction was open wins), which is also
the answer replaying the log gives.
"""

from __future__ import annotations

from dataclasses import dataclass, field

NO_EXPIRE_TIMESTAMP = -1
UNKNOWN_RECORD_OFFSET = -1


@dataclass(frozen=True)
class CommittedOffset:
    """A group's committed offset as the coordinator stores it in ``__consumer_offsets`` (Kafka's OffsetAndMetadata value)."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp_ms: int
    # Set only when the committer asked for its own retention time.
    expire_timestamp_ms: int = NO_EXPIRE_TIMESTAMP
    # Offset of the record's batch in __consumer_offsets; not part of the stored value.
    record_offset: int = field(default=UNKNOWN_RECORD_OFFSET, compare=False)

    def is_expired(self, now_ms: int, base_timestamp_ms: int, retention_ms: int) -> bool:
        if self.expire_timestamp_ms != NO_EXPIRE_TIMESTAMP:
            return now_ms >= self.expire_timestamp_ms
        return now_ms - base_timestamp_ms >= retention_ms

    def written_before(self, other: CommittedOffset) -> bool:
        """Whether this offset's record precedes ``other``'s in the log (unknown counts as oldest)."""
        return self.record_offset < other.record_offset
