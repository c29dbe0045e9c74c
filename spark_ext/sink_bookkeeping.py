"""Which micro-batch each sink task last committed, recorded inside the task's own transaction.

Every exactly-once task (sink id ``S``, Spark partition ``p``) has

* the transactional id ``S-p``, and
* the consumer group ``S-p``, whose committed offset for partition 0 of the
  bookkeeping topic (default ``_spate_sink_batches``) is the id of the last
  micro-batch whose transaction committed. The committed metadata says so
  in words, with the streaming query's id: ``spate sink batch 7 of query
  <uuid>`` (the id is kept in the checkpoint, so it survives restarts).

The task writes that offset with ``send_offsets_to_transaction`` in the same
transaction as its records, so the record of batch ``b`` becomes visible
exactly when the records do. A task replaying batch ``b`` first calls
``init_transactions`` (which aborts, or waits for the completion of, the
previous transaction of ``S-p``), then reads the group's offset: ``>= b``
means this partition of the batch is already committed and nothing is
written again. A record left by a different query (a new checkpoint that
kept the old ``transactionalIdPrefix``, so batch ids start again at 0) is
not taken as a replay: that query's batches are written.

The bookkeeping topic holds no records; it exists because the group
coordinator only accepts offsets for partitions that exist. It is created
(one partition, broker defaults otherwise) the first time a task finds no
record for itself. Committed offsets of groups without members expire after
the broker's ``offsets.retention.minutes``, so a query must not stay stopped
longer than that with an uncommitted batch to replay.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from spate.client import Admin, AdminError, ErrorCode, NewTopic, OffsetAndMetadata, TopicPartition

METADATA_PREFIX = "spate sink batch "
_METADATA = re.compile(r"spate sink batch (\d+)(?: of query (\S+))?$")


@dataclass(frozen=True)
class BatchRecord:
    """A task's last committed batch, and the query that committed it (None: not recorded)."""

    batch_id: int
    query_id: str | None = None

    def covers(self, batch_id: int, query_id: str | None) -> bool:
        """Whether batch ``batch_id`` of query ``query_id`` is already committed by this record."""
        same_query = self.query_id is None or query_id is None or self.query_id == query_id
        return same_query and self.batch_id >= batch_id


def batch_metadata(batch_id: int, query_id: str | None) -> str:
    text = f"{METADATA_PREFIX}{batch_id}"
    return text if query_id is None else f"{text} of query {query_id}"


def parse_batch_record(offset: int, metadata: str | None) -> BatchRecord:
    match = _METADATA.match(metadata or "")
    return BatchRecord(offset, match.group(2) if match else None)


@dataclass(frozen=True)
class BatchBookkeeping:
    """Names of one sink's bookkeeping. Picklable."""

    sink_id: str
    topic: str

    @property
    def key_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, 0)

    def transactional_id(self, task: int) -> str:
        return f"{self.sink_id}-{task}"

    def group_id(self, task: int) -> str:
        return f"{self.sink_id}-{task}"

    def offsets_for(self, batch_id: int, query_id: str | None = None) -> dict[TopicPartition, OffsetAndMetadata]:
        """What a task commits in its transaction to record ``batch_id`` of query ``query_id``."""
        if batch_id < 0:
            raise ValueError(f"batch ids are not negative, not {batch_id}")
        return {self.key_partition: OffsetAndMetadata(batch_id, batch_metadata(batch_id, query_id))}

    def last_committed_batch(self, admin: Admin, task: int, *, timeout_ms: float) -> BatchRecord | None:
        """The last batch task ``task`` committed, None if it never did."""
        offsets = admin.list_group_offsets(self.group_id(task), [self.key_partition], timeout_ms=timeout_ms)
        committed = offsets.get(self.key_partition)
        return None if committed is None else parse_batch_record(committed.offset, committed.metadata)

    def ensure_topic(self, admin: Admin, *, timeout_ms: float) -> None:
        """Create the bookkeeping topic unless it exists (several tasks may race to; all succeed)."""
        try:
            admin.create_topics([NewTopic(self.topic, num_partitions=1)], timeout_ms=timeout_ms)
        except AdminError as exc:
            if exc.code != ErrorCode.TOPIC_ALREADY_EXISTS:
                raise
