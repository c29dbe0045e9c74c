"""Rebuilding groups and their offsets from one ``__consumer_offsets`` partition.

Batches are replayed oldest first, so the newest value of each key wins and
a tombstone (null value) removes what came before it; this gives the same
answer before and after compaction. Offsets written inside a transaction (a
transactional batch) are held apart per producer id until that producer's
marker (a control batch) is met: COMMIT makes them committed offsets, except
where a record written after them already stored the partition's offset;
ABORT drops them. Offsets of transactions with no marker yet stay pending
in their group; the transaction coordinator ends those later. Then:

* a group with a metadata record comes back Stable with its members and
  their assignments (they keep heartbeating across a broker restart), or
  Empty if it had none;
* offsets (committed or pending) whose group has no (surviving) metadata
  record belong to a group that only stores offsets here: it comes back
  Empty with no protocol type.

Records this broker cannot read (other group protocols, garbage written by
a client, a malformed marker) are skipped and counted, never fatal: one bad
record must not cost every group in the partition its offsets.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from broker_core.coordinator.group.group_metadata import GroupMetadata, GroupState
from broker_core.coordinator.group.member import MemberMetadata, Protocol
from broker_core.coordinator.group.offsets import CommittedOffset
from broker_core.coordinator.group.offsets_log import (
    GroupMetadataKey,
    OffsetCommitKey,
    OffsetsRecordError,
    decode_group_metadata_value,
    decode_key,
    decode_offset_commit_value,
)
from spate.protocol.internal_records.consumer_group_records import CONSUMER_GROUP_RECORDS
from spate.records import ControlType, CorruptRecordError, DecodedBatch, Record, parse_control_record
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

# group id -> partition -> offset
GroupOffsets = dict[str, dict[TopicPartition, CommittedOffset]]


@dataclass
class LoadedPartition:
    groups: dict[str, GroupMetadata] = field(default_factory=dict)
    records: int = 0
    skipped: int = 0
    # Producers whose transactional offsets were left without a marker.
    open_transactions: set[int] = field(default_factory=set)
    # Records of consumer groups (KIP-848), oldest first, for their own coordinator to replay.
    consumer_group_records: list[tuple[bytes, bytes | None]] = field(default_factory=list)


@dataclass
class _Replay:
    metadata: dict[str, Any] = field(default_factory=dict)  # group id -> its GroupMetadataValue
    offsets: GroupOffsets = field(default_factory=dict)
    pending: dict[int, GroupOffsets] = field(default_factory=dict)  # producer id -> its open offsets
    loaded: LoadedPartition = field(default_factory=LoadedPartition)

    def batch(self, batch: DecodedBatch) -> None:
        header = batch.header
        self.loaded.records += len(batch.records)
        if header.is_control:
            self.marker(batch)
            return
        target = self.pending.setdefault(header.producer_id, {}) if header.is_transactional else self.offsets
        for record in batch.records:
            try:
                self.record(record, header.base_offset, target)
            except OffsetsRecordError as exc:
                self.loaded.skipped += 1
                if not exc.unknown_type:
                    logger.warning("skipping unreadable __consumer_offsets record at offset %d: %s", record.offset, exc)

    def record(self, record: Record, batch_offset: int, offsets: GroupOffsets) -> None:
        if record.key is not None and int.from_bytes(bytes(record.key[:2]), "big") in CONSUMER_GROUP_RECORDS:
            value = None if record.value is None else bytes(record.value)
            self.loaded.consumer_group_records.append((bytes(record.key), value))
            return
        key = decode_key(record.key)
        if isinstance(key, OffsetCommitKey):
            tp = TopicPartition(key.topic, key.partition)
            if record.value is None:
                offsets.get(key.group, {}).pop(tp, None)
            else:
                value = replace(decode_offset_commit_value(record.value), record_offset=batch_offset)
                offsets.setdefault(key.group, {})[tp] = value
        elif isinstance(key, GroupMetadataKey):
            if record.value is None:
                self.metadata.pop(key.group, None)
            else:
                self.metadata[key.group] = decode_group_metadata_value(record.value)

    def marker(self, batch: DecodedBatch) -> None:
        producer_id = batch.header.producer_id
        try:
            if len(batch.records) != 1:
                raise CorruptRecordError(f"control batch at offset {batch.header.base_offset} "
                                         f"holds {len(batch.records)} records")
            control_type, _ = parse_control_record(batch.records[0])
        except CorruptRecordError as exc:
            # The transaction's offsets stay pending: the coordinator writes its marker again.
            self.loaded.skipped += len(batch.records)
            logger.warning("skipping unreadable transaction marker in __consumer_offsets: %s", exc)
            return
        pending = self.pending.pop(producer_id, {})
        if control_type is not ControlType.COMMIT:
            return
        for group_id, offsets in pending.items():
            committed = self.offsets.setdefault(group_id, {})
            for tp, offset in offsets.items():
                current = committed.get(tp)
                if current is None or current.written_before(offset):
                    committed[tp] = offset

    def groups(self) -> LoadedPartition:
        loaded = self.loaded
        for group_id, value in self.metadata.items():
            group = group_from_value(group_id, value)
            group.offsets.update(self.offsets.pop(group_id, {}))
            loaded.groups[group_id] = group
        for group_id, committed in self.offsets.items():
            if committed:
                group = loaded.groups[group_id] = GroupMetadata(group_id)
                group.offsets.update(committed)
        for producer_id, by_group in self.pending.items():
            for group_id, offsets in by_group.items():
                if not offsets:
                    continue
                group = loaded.groups.get(group_id)
                if group is None:
                    group = loaded.groups[group_id] = GroupMetadata(group_id)
                group.add_pending_txn_offsets(producer_id, offsets)
                loaded.open_transactions.add(producer_id)
        return loaded


def replay(batches: Iterable[DecodedBatch]) -> LoadedPartition:
    """Groups as the batches leave them."""
    state = _Replay()
    for batch in batches:
        state.batch(batch)
    return state.groups()


def group_from_value(group_id: str, value: Any) -> GroupMetadata:
    """A group as its stored GroupMetadataValue describes it."""
    state_timestamp = value.current_state_timestamp if value.current_state_timestamp >= 0 else None
    has_members = bool(value.members) and value.protocol is not None
    group = GroupMetadata(
        group_id,
        state=GroupState.STABLE if has_members else GroupState.EMPTY,
        now_ms=state_timestamp,
        generation_id=value.generation,
        protocol_type=value.protocol_type or None,
        protocol_name=value.protocol if has_members else None,
        leader_id=value.leader if has_members else None,
    )
    if not has_members:
        return group
    for stored in value.members:
        group.add_member(
            MemberMetadata(
                member_id=stored.member_id,
                group_instance_id=stored.group_instance_id,
                client_id=stored.client_id,
                client_host=stored.client_host,
                rebalance_timeout_ms=stored.rebalance_timeout,
                session_timeout_ms=stored.session_timeout,
                protocol_type=value.protocol_type,
                protocols=(Protocol(value.protocol, stored.subscription),),  # type: ignore[arg-type]
                assignment=stored.assignment,
            )
        )
    if group.leader_id not in group.members:
        group.leader_id = next(iter(group.members))
    group.refresh_subscribed_topics()
    return group
