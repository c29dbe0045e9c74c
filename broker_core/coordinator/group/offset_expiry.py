"""The periodic removal of expired offsets, and of Empty groups left with nothing stored.

Every ``offsets.retention.check.interval.ms`` each loaded group drops the
offsets past retention (the rules are in ``offsets.py``); an Empty group
left with no offsets at all is removed with them. Offsets of an open
transaction keep their group: its commit may still make them visible.

The cache is updated first and the tombstones written after, as Kafka does
(``cleanupGroupMetadata``): a failed write only means the offsets reappear
after a restart and expire again.
"""

from __future__ import annotations

import logging

from broker_core.coordinator.group.consumer_protocol import CONSUMER_PROTOCOL_TYPE
from broker_core.coordinator.group.group_config import GroupConfig
from broker_core.coordinator.group.group_metadata import GroupMetadata, GroupState
from broker_core.coordinator.group.group_metadata_manager import GroupMetadataManager
from broker_core.coordinator.group.offsets_log import group_tombstone, offset_tombstone
from broker_core.coordinator.scheduler import Scheduler, TimerHandle
from spate.protocol.errors import ErrorCode
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)


def expired_offsets(group: GroupMetadata, now_ms: int, retention_ms: int) -> list[TopicPartition]:
    """The group's partitions whose committed offsets are past retention (see ``offsets.py`` for the rules)."""
    keep_topics: frozenset[str] = frozenset()
    since_empty = False
    if group.protocol_type is None:
        pass  # offsets-only group: each offset counts from its commit
    elif group.is_(GroupState.EMPTY):
        since_empty = group.state_timestamp_ms is not None
    elif (
        group.protocol_type == CONSUMER_PROTOCOL_TYPE
        and group.subscribed_topics is not None
        and group.is_(GroupState.STABLE)
    ):
        keep_topics = group.subscribed_topics
    else:
        return []
    expired = []
    for tp, committed in group.offsets.items():
        if tp.topic in keep_topics:
            continue
        base_ms = group.state_timestamp_ms if since_empty else committed.commit_timestamp_ms
        if committed.is_expired(now_ms, base_ms, retention_ms):  # type: ignore[arg-type]
            expired.append(tp)
    return expired


class OffsetExpiry:
    def __init__(self, config: GroupConfig, groups: GroupMetadataManager, scheduler: Scheduler) -> None:
        self._config = config
        self._groups = groups
        self._scheduler = scheduler
        self._timer: TimerHandle | None = None

    def start(self) -> None:
        self._timer = self._scheduler.call_later(self._config.offsets_retention_check_interval_ms, self._tick)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None

    def _tick(self) -> None:
        try:
            self.cleanup_expired_offsets()
        finally:
            self.start()

    def cleanup_expired_offsets(self) -> int:
        """Remove offsets past retention, and Empty groups left with none; returns offsets removed."""
        now = self._scheduler.now_ms()
        removed = 0
        for group in self._groups.groups():
            if self._groups.coordinator_error(group.group_id) is ErrorCode.NONE:
                removed += self._expire(group, now)
        if removed:
            logger.info("removed %d expired offset(s)", removed)
        return removed

    def _expire(self, group: GroupMetadata, now: int) -> int:
        expired = expired_offsets(group, now, self._config.offsets_retention_ms)
        for tp in expired:
            del group.offsets[tp]
        records = [offset_tombstone(group.group_id, tp) for tp in expired]
        # Offsets of an open transaction keep the group: its commit may still make them visible.
        if group.is_(GroupState.EMPTY) and not group.has_offsets:
            group.transition_to(GroupState.DEAD, now)
            self._groups.remove_group(group)
            if group.generation_id > 0:
                records.append(group_tombstone(group.group_id))
            logger.info("group %r is empty with no offsets left; removed", group.group_id)
        if records:
            self._groups.append(group.group_id, records, for_offsets=True)
        return len(expired)
