"""Offsets to commit, as the calls that take them accept them: ints or OffsetAndMetadata, none negative.

A consumer's ``commit``, the admin client's ``alter_group_offsets`` and a
transaction's ``send_offsets_to_transaction`` (in the producer, or from
another process) all take them this way.
"""

from __future__ import annotations

from typing import Mapping

from spate.structs import OffsetAndMetadata, TopicPartition


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
