"""Offsets to commit: what the calls accept, and the partition entries and answers of the commit requests."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from spate.client.commit_offsets import committed_partitions, offsets_to_commit, partition_error_codes
from spate.protocol import ErrorCode
from spate.protocol.messages.offset_commit import OffsetCommitRequest
from spate.protocol.messages.txn_offset_commit import TxnOffsetCommitRequest
from spate.structs import OffsetAndMetadata, TopicPartition

A, B, C = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)


def test_ints_and_offsets_with_metadata_are_accepted_alike() -> None:
    assert offsets_to_commit({A: 5, B: OffsetAndMetadata(7, "m", 2)}) == {
        A: OffsetAndMetadata(5), B: OffsetAndMetadata(7, "m", 2)
    }


@pytest.mark.parametrize("value", [-1, OffsetAndMetadata(-3)])
def test_a_negative_offset_is_refused_naming_the_partition(value) -> None:
    offset = value if isinstance(value, int) else value.offset
    with pytest.raises(ValueError, match=f"^cannot commit negative offset {offset} for a-0 to group 'g'$"):
        offsets_to_commit({A: value}, " to group 'g'")


@pytest.mark.parametrize(
    "entry", [OffsetCommitRequest.OffsetCommitRequestPartition, TxnOffsetCommitRequest.TxnOffsetCommitRequestPartition]
)
def test_both_commit_requests_nest_the_same_entries_under_their_topics_in_order(entry) -> None:
    nested = committed_partitions({C: OffsetAndMetadata(3), B: OffsetAndMetadata(2, "x", 4), A: OffsetAndMetadata(1)},
                                  entry)
    assert list(nested) == ["a", "b"]
    assert [(p.partition_index, p.committed_offset, p.committed_metadata, p.committed_leader_epoch)
            for p in nested["a"]] == [(0, 1, "", -1), (1, 2, "x", 4)]
    assert all(isinstance(p, entry) for parts in nested.values() for p in parts)


def test_each_partitions_answer_is_read_by_topic_and_index() -> None:
    body = SimpleNamespace(topics=[
        SimpleNamespace(name="a", partitions=[SimpleNamespace(partition_index=0, error_code=0),
                                              SimpleNamespace(partition_index=1, error_code=int(ErrorCode.NOT_COORDINATOR))]),
    ])
    assert partition_error_codes(body) == {A: ErrorCode.NONE, B: ErrorCode.NOT_COORDINATOR}
