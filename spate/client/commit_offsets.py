"""Offsets to commit: as the calls that take them accept them, and as the requests that carry them say them.

A consumer's ``commit``, the admin client's ``alter_group_offsets`` and a
transaction's ``send_offsets_to_transaction`` (in the producer, or from
another process) all take ints or OffsetAndMetadata, none negative. The
requests that commit them, OffsetCommit and TxnOffsetCommit, nest the same
partition entries under their topics and answer with one error code per
partition in the same shape.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from spate.protocol import ErrorCode
from spate.structs import OffsetAndMetadata, TopicPartition, group_by_topic


def offsets_to_commit(
    offsets: Mapping[TopicPartition, int | OffsetAndMetadata], where: str = ""
) -> dict[TopicPartition, OffsetAndMetadata]:
    """Each offset as an OffsetAndMetadata; ValueError for a negative one (``where`` ends the message)."""
    committed: dict[TopicPartition, OffsetAndMetadata] = {}
    for tp, value in offsets.items():
        entry = value if isinstance(value, OffsetAndMetadata) else OffsetAndMetadata(int(value))
        if entry.offset < 0:
            raise ValueError(f"cannot commit negative offset {entry.offset} for {tp}{where}")
        committed[tp] = entry
    return committed


def committed_partitions(
    offsets: Mapping[TopicPartition, OffsetAndMetadata], partition: Callable[..., Any]
) -> dict[str, list[Any]]:
    """``{topic: [partition(...) per offset]}`` in partition order; ``partition`` is the request's entry type."""
    return group_by_topic(
        sorted(offsets.items()),
        key=lambda item: item[0],
        value=lambda item: partition(
            partition_index=item[0].partition,
            committed_offset=item[1].offset,
            committed_leader_epoch=item[1].leader_epoch,
            committed_metadata=item[1].metadata,
        ),
    )


def partition_error_codes(body: Any) -> dict[TopicPartition, ErrorCode]:
    """Each partition's answer in an OffsetCommit or TxnOffsetCommit response (NONE for success)."""
    return {
        TopicPartition(topic.name, part.partition_index): ErrorCode.of(part.error_code)
        for topic in body.topics
        for part in topic.partitions
    }
