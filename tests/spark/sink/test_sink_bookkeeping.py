"""The per-task batch record: names, the committed offset and metadata, and when it means "replay"."""

from __future__ import annotations

import pytest

from spark_ext.sink_bookkeeping import (
    BatchBookkeeping,
    BatchRecord,
    batch_metadata,
    parse_batch_record,
)
from spate.client import OffsetAndMetadata, TopicPartition


def test_task_names_derive_from_the_sink_id_and_partition() -> None:
    books = BatchBookkeeping(sink_id="orders-copy", topic="_books")
    assert books.transactional_id(3) == "orders-copy-3"
    assert books.group_id(3) == "orders-copy-3"
    assert books.offsets_for(12, "q") == {
        TopicPartition("_books", 0): OffsetAndMetadata(12, "spate sink batch 12 of query q")
    }


def test_negative_batch_ids_are_refused() -> None:
    with pytest.raises(ValueError):
        BatchBookkeeping("s", "t").offsets_for(-1)


@pytest.mark.parametrize("query", ["5b0c1f9e-0000-4000-8000-000000000000", None])
def test_metadata_round_trips(query) -> None:
    assert parse_batch_record(9, batch_metadata(9, query)) == BatchRecord(9, query)


def test_unrecognised_metadata_reads_as_a_record_without_a_query() -> None:
    assert parse_batch_record(4, "written by hand") == BatchRecord(4, None)
    assert parse_batch_record(4, None) == BatchRecord(4, None)


@pytest.mark.parametrize(
    ("record", "batch", "query", "covered"),
    [
        (BatchRecord(5, "q"), 5, "q", True),
        (BatchRecord(5, "q"), 3, "q", True),
        (BatchRecord(5, "q"), 6, "q", False),
        (BatchRecord(5, "old"), 0, "new", False),
        (BatchRecord(5, None), 5, "q", True),
        (BatchRecord(5, "q"), 5, None, True),
    ],
)
def test_a_record_covers_its_own_query_up_to_its_batch(record, batch, query, covered) -> None:
    assert record.covers(batch, query) is covered
