"""The group cache and its backing topic: which groups this broker owns, and their stored state.

A group belongs to partition ``partition_for(group_id)`` of
``__consumer_offsets``; this broker coordinates it while it leads that
partition (see :mod:`broker_core.coordinator.partition_ownership` for the
answers while a partition is loading or could not be read, and for the
epochs that order elections). Becoming leader (``on_elected``) schedules
the partition's load; stopping (``on_resigned``) drops its groups from the
cache, and the coordinator answers whatever they had parked.

Every change of stored state is written first and applied to the cache only
after the append succeeded, so the cache never holds what a restart would
not bring back. Offsets committed inside a transaction are written as that
producer's transactional batch and kept pending in their group until the
transaction coordinator reports the marker it wrote to the partition
(``complete_txn_offsets``). Loading happens one partition per scheduler turn, so a large
topic does not stall the event loop. Expired offsets are removed by
:mod:`offset_expiry`.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import replace
from typing import Callable, Iterable, Mapping

from broker_core.coordinator.group.group_config import GroupConfig
from broker_core.coordinator.group.group_loader import replay
from broker_core.coordinator.group.group_metadata import GroupMetadata, GroupState
from broker_core.coordinator.group.offsets import NO_EXPIRE_TIMESTAMP, CommittedOffset
from broker_core.coordinator.group.offsets_log import (
    group_metadata_record,
    group_tombstone,
    offset_commit_record,
    offset_tombstone,
)
from broker_core.coordinator.group.offsets_topic import KeyValue, OffsetsTopic, TxnProducer
from broker_core.coordinator.group.results import OffsetCommitEntry
from broker_core.coordinator.partition_ownership import Election, OwnedPartitions, PartitionStatus
from broker_core.coordinator.scheduler import Scheduler, TimerHandle
from spate.protocol.errors import ErrorCode, KafkaError
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

E = ErrorCode


def _append_error(code: ErrorCode, *, for_offsets: bool) -> ErrorCode:
    """What a client is told when writing to ``__consumer_offsets`` failed (Kafka's mapping)."""
    if code in (E.UNKNOWN_TOPIC_OR_PARTITION, E.NOT_ENOUGH_REPLICAS, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND):
        return E.COORDINATOR_NOT_AVAILABLE
    if code in (E.NOT_LEADER_OR_FOLLOWER, E.KAFKA_STORAGE_ERROR):
        return E.NOT_COORDINATOR
    if code in (E.MESSAGE_TOO_LARGE, E.RECORD_LIST_TOO_LARGE, E.INVALID_FETCH_SIZE):
        return E.INVALID_COMMIT_OFFSET_SIZE if for_offsets else E.UNKNOWN_SERVER_ERROR
    if code is E.REQUEST_TIMED_OUT and not for_offsets:
        return E.REBALANCE_IN_PROGRESS
    return code


def java_string_length(text: str) -> int:
    """``String.length()``: UTF-16 code units, which is what Kafka's metadata limit counts."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class GroupMetadataManager:
    def __init__(
        self,
        config: GroupConfig,
        topic: OffsetsTopic,
        scheduler: Scheduler,
        *,
        on_group_loaded: Callable[[GroupMetadata], None] = lambda group: None,
        on_consumer_group_records: Callable[[list[tuple[bytes, bytes | None]]], None] = lambda records: None,
    ) -> None:
        self._config = config
        self._topic = topic
        self._scheduler = scheduler
        self._on_group_loaded = on_group_loaded
        self._on_consumer_group_records = on_consumer_group_records
        self._groups: dict[str, GroupMetadata] = {}
        self._partitions = OwnedPartitions(config.offsets_topic_partitions)
        self._load_queue: deque[tuple[int, int]] = deque()  # (partition, epoch)
        self._load_timer: TimerHandle | None = None
        self._active = False

    # --- ownership and loading -------------------------------------------------------------

    def startup(self) -> None:
        """Own the partitions this broker leads now (embedded mode; in a cluster, elections arrive later)."""
        self._active = True
        count = self._topic.partition_count()
        if count is not None:
            self._partitions.partition_count = count
            for partition in self._topic.led_partitions():
                self.on_elected(partition, self._topic.leader_epoch(partition))

    def shutdown(self) -> None:
        self._active = False
        if self._load_timer is not None:
            self._load_timer.cancel()
        self._load_timer = None
        self._load_queue.clear()

    @property
    def partition_count(self) -> int:
        return self._partitions.partition_count

    def partition_for(self, group_id: str) -> int:
        return self._partitions.partition_for(group_id)

    def coordinator_epoch(self, partition: int) -> int | None:
        """The newest leader epoch seen for ``partition`` of ``__consumer_offsets``."""
        return self._partitions.epoch(partition)

    def ensure_topic(self) -> int:
        """Create ``__consumer_offsets`` on first use; own any led partition not yet known.

        A partition met here is new (or was created behind the coordinator's
        back), so it is loaded at once rather than on a later turn.
        """
        self._partitions.partition_count = self._topic.create()
        for partition in self._topic.led_partitions():
            if self._partitions.status(partition) is None:
                epoch = self._topic.leader_epoch(partition)
                if self._partitions.elect(partition, epoch, reload_owned=False) is Election.LOAD:
                    self.load_partition(partition)
        return self._partitions.partition_count

    def on_elected(self, partition: int, epoch: int) -> bool:
        """This broker leads ``partition`` at ``epoch``: load its groups on a later turn (Kafka's
        onElection). A partition already owned keeps its groups; False for a stale epoch."""
        self._refresh_partition_count()
        election = self._partitions.elect(partition, epoch, reload_owned=False)
        if election is Election.STALE:
            logger.info("not loading __consumer_offsets-%d at epoch %d: epoch %s is newer", partition, epoch,
                        self._partitions.epoch(partition))
            return False
        if election is Election.LOAD:
            self._load_queue.append((partition, epoch))
            if self._load_timer is None:
                self._load_timer = self._scheduler.call_later(0, self._load_next)
        return True

    def on_resigned(self, partition: int, epoch: int | None) -> list[GroupMetadata]:
        """This broker no longer leads ``partition``: forget its groups (Kafka's onResignation).

        Returns the groups dropped, for the coordinator to answer their parked
        requests and stop their timers; nothing for a stale resignation.
        """
        if not self._partitions.resign(partition, epoch):
            logger.info("not unloading __consumer_offsets-%d at epoch %s: epoch %s is newer", partition, epoch,
                        self._partitions.epoch(partition))
            return []
        dropped = [group for group in self._groups.values() if self.partition_for(group.group_id) == partition]
        for group in dropped:
            del self._groups[group.group_id]
        logger.info("unloaded %d group(s) of __consumer_offsets-%d", len(dropped), partition)
        return dropped

    def _refresh_partition_count(self) -> None:
        count = self._topic.partition_count()
        if count is not None:
            self._partitions.partition_count = count

    def _load_next(self) -> None:
        self._load_timer = None
        if not self._load_queue:
            return
        partition, epoch = self._load_queue.popleft()
        # A load whose partition moved on meanwhile (resigned, or elected again at a newer epoch) is dropped.
        if self._partitions.is_loading_at(partition, epoch):
            self.load_partition(partition)
        if self._load_queue:
            self._load_timer = self._scheduler.call_later(0, self._load_next)

    def load_partition(self, partition: int) -> None:
        try:
            loaded = replay(self._topic.read_batches(partition))
        except Exception:
            logger.exception("cannot load __consumer_offsets-%d; its groups stay unavailable", partition)
            self._partitions.set_status(partition, PartitionStatus.FAILED)
            return
        for group in loaded.groups.values():
            self._groups[group.group_id] = group
            self._on_group_loaded(group)
        if loaded.consumer_group_records:
            self._on_consumer_group_records(loaded.consumer_group_records)
        self._partitions.set_status(partition, PartitionStatus.LOADED)
        logger.log(
            logging.INFO if loaded.records else logging.DEBUG,
            "loaded %d group(s) from __consumer_offsets-%d at epoch %s (%d record(s), %d skipped, "
            "%d open transaction(s))",
            len(loaded.groups), partition, self._partitions.epoch(partition), loaded.records, loaded.skipped,
            len(loaded.open_transactions),
        )

    def check(self, group_id: str | None, *, allow_empty_id: bool) -> ErrorCode:
        """Kafka's checks before any group request, in Kafka's order: serving at all, a usable
        id (OffsetCommit, OffsetFetch, DescribeGroups and DeleteGroups accept ""), owner, loaded."""
        if not self._active:
            return E.COORDINATOR_NOT_AVAILABLE
        if group_id is None or (not allow_empty_id and group_id == ""):
            return E.INVALID_GROUP_ID
        return self.coordinator_error(group_id)

    @property
    def is_active(self) -> bool:
        return self._active

    def coordinator_error(self, group_id: str) -> ErrorCode:
        """NONE when this broker serves ``group_id`` now, else the code that says why not."""
        return self._partitions.coordinator_error(group_id)

    @property
    def is_loading(self) -> bool:
        return self._partitions.is_loading

    # --- the cache -------------------------------------------------------------------------

    def get_group(self, group_id: str) -> GroupMetadata | None:
        return self._groups.get(group_id)

    def add_group(self, group: GroupMetadata) -> GroupMetadata:
        return self._groups.setdefault(group.group_id, group)

    def remove_group(self, group: GroupMetadata) -> None:
        if self._groups.get(group.group_id) is group:
            del self._groups[group.group_id]

    def groups(self) -> list[GroupMetadata]:
        return list(self._groups.values())

    # --- writes ----------------------------------------------------------------------------

    def append(
        self, group_id: str, records: list[KeyValue], *, for_offsets: bool, producer: TxnProducer | None = None
    ) -> tuple[ErrorCode, int]:
        """Write one batch to the group's partition: (NONE, its base offset), or the client's error."""
        try:
            base_offset = self._topic.append(
                self.partition_for(group_id), records, self._scheduler.now_ms(), producer=producer
            )
        except KafkaError as exc:
            logger.warning("writing %d record(s) of group %r failed: %s", len(records), group_id, exc)
            return _append_error(exc.code, for_offsets=for_offsets), -1
        return E.NONE, base_offset

    def store_group(self, group: GroupMetadata, assignments: Mapping[str, bytes] | None = None) -> ErrorCode:
        """Write the group's generation, leader, protocol and members (with ``assignments`` if given)."""
        return self.append(group.group_id, [group_metadata_record(group, assignments)], for_offsets=False)[0]

    def _validate_offsets(
        self, offsets: Mapping[TopicPartition, OffsetCommitEntry], *, retention_ms: int
    ) -> tuple[dict[TopicPartition, ErrorCode], dict[TopicPartition, CommittedOffset]]:
        """Refusals per partition, and the offsets to write for the rest."""
        now = self._scheduler.now_ms()
        expire = now + retention_ms if retention_ms >= 0 else NO_EXPIRE_TIMESTAMP
        refused: dict[TopicPartition, ErrorCode] = {}
        valid: dict[TopicPartition, CommittedOffset] = {}
        for tp, entry in offsets.items():
            metadata = entry.metadata or ""
            if java_string_length(metadata) > self._config.offset_metadata_max_bytes:
                refused[tp] = E.OFFSET_METADATA_TOO_LARGE
            else:
                valid[tp] = CommittedOffset(entry.offset, entry.leader_epoch, metadata, now, expire)
        return refused, valid

    def _write_offsets(
        self, group: GroupMetadata, valid: dict[TopicPartition, CommittedOffset], producer: TxnProducer | None
    ) -> tuple[ErrorCode, dict[TopicPartition, CommittedOffset]]:
        """Write ``valid`` as one batch; on success the offsets carry their batch's position."""
        records = [offset_commit_record(group.group_id, tp, committed) for tp, committed in valid.items()]
        error, base_offset = self.append(group.group_id, records, for_offsets=True, producer=producer)
        if error is not E.NONE:
            return error, {}
        return E.NONE, {tp: replace(committed, record_offset=base_offset) for tp, committed in valid.items()}

    def store_offsets(
        self,
        group: GroupMetadata,
        offsets: Mapping[TopicPartition, OffsetCommitEntry],
        *,
        retention_ms: int = -1,
    ) -> dict[TopicPartition, ErrorCode]:
        """Validate, write the valid ones as one batch, then cache them; one code per partition."""
        results, valid = self._validate_offsets(offsets, retention_ms=retention_ms)
        if valid:
            error, written = self._write_offsets(group, valid, None)
            if error is E.NONE and not group.is_(GroupState.DEAD):
                group.offsets.update(written)
            for tp in valid:
                results[tp] = error
        return {tp: results[tp] for tp in offsets}

    def store_txn_offsets(
        self,
        group: GroupMetadata,
        producer: TxnProducer,
        offsets: Mapping[TopicPartition, OffsetCommitEntry],
    ) -> dict[TopicPartition, ErrorCode]:
        """Write the valid offsets as one transactional batch of ``producer``; they stay pending
        in the group until its transaction ends. One code per partition."""
        results, valid = self._validate_offsets(offsets, retention_ms=-1)
        if valid:
            error, written = self._write_offsets(group, valid, producer)
            if error is E.NONE and not group.is_(GroupState.DEAD):
                group.add_pending_txn_offsets(producer.producer_id, written)
            for tp in valid:
                results[tp] = error
        return {tp: results[tp] for tp in offsets}

    def complete_txn_offsets(self, partition: int, producer_id: int, *, commit: bool) -> int:
        """A marker for ``producer_id`` landed in ``partition``: end its offsets in every group there.

        Returns the groups affected. A partition still loading needs nothing:
        its replay meets the marker in the log.
        """
        if self._partitions.status(partition) is not PartitionStatus.LOADED:
            return 0
        affected = 0
        for group in self.groups():
            if producer_id in group.pending_txn_offsets and self.partition_for(group.group_id) == partition:
                applied = group.complete_txn_offsets(producer_id, commit=commit)
                affected += 1
                logger.debug("group %r: transaction of producer %d %s (%d offset(s) now visible)",
                             group.group_id, producer_id, "committed" if commit else "aborted", applied)
        return affected

    def delete_offsets(self, group: GroupMetadata, partitions: Iterable[TopicPartition]) -> ErrorCode:
        """Tombstone the group's offsets for ``partitions`` (those it has), then drop them."""
        present = [tp for tp in partitions if tp in group.offsets]
        if not present:
            return E.NONE
        records = [offset_tombstone(group.group_id, tp) for tp in present]
        error, _ = self.append(group.group_id, records, for_offsets=True)
        if error is E.NONE:
            for tp in present:
                group.offsets.pop(tp, None)
        return error

    def delete_group(self, group: GroupMetadata) -> ErrorCode:
        """Tombstone every offset and the group itself; on success the group is Dead and gone."""
        records = [offset_tombstone(group.group_id, tp) for tp in group.offsets]
        # A group that never completed a rebalance has no metadata record to remove.
        if group.generation_id > 0:
            records.append(group_tombstone(group.group_id))
        if records:
            error, _ = self.append(group.group_id, records, for_offsets=False)
            if error is not E.NONE:
                return error
        group.offsets.clear()
        group.transition_to(GroupState.DEAD, self._scheduler.now_ms())
        self.remove_group(group)
        return E.NONE
