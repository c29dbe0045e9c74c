"""Committing a streaming query's processed offsets to a consumer group (option ``groupId``).

After Spark commits a micro-batch, the source commits the batch's end
offsets (the next offset to read, as Kafka consumers commit) for every
partition to the group, so ``spate groups describe``, Burrow and other lag
tools see the query's progress and lag. The commit is made from outside
the group (no member, no generation), which the coordinator accepts while
the group has no members.

The query's checkpoint stays the source of truth: nothing reads these
offsets back, and a failed commit (coordinator away, the group in use by
real consumers) is logged and skipped; the next batch commits again.
"""

from __future__ import annotations

import logging
from typing import Callable, Mapping

from spate.client import Admin, OffsetAndMetadata, TopicPartition

log = logging.getLogger("spark_ext.group_commit")

COMMIT_METADATA = "spark structured streaming (spate source)"
_COMMIT_TIMEOUT_MS = 10_000


class GroupOffsetCommitter:
    def __init__(self, group_id: str, admin: Callable[[], Admin], *, timeout_ms: float = _COMMIT_TIMEOUT_MS) -> None:
        """``admin`` hands out the driver's admin client (made on first use)."""
        self.group_id = group_id
        self._admin = admin
        self._timeout_ms = timeout_ms

    def commit(self, offsets: Mapping[TopicPartition, int]) -> bool:
        """Commit ``offsets``; True when the coordinator accepted them, False (logged) otherwise."""
        if not offsets:
            return True
        committed = {tp: OffsetAndMetadata(offset, COMMIT_METADATA) for tp, offset in offsets.items() if offset >= 0}
        try:
            self._admin().alter_group_offsets(self.group_id, committed, timeout_ms=self._timeout_ms)
        except Exception as exc:  # noqa: BLE001 - a lag report must never fail the query
            log.warning("could not commit offsets of %d partitions to group %r: %s",
                        len(committed), self.group_id, exc)
            return False
        return True
