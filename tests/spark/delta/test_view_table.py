"""The Delta side of a table view: upserts, deletes and the stored offsets, committed together.

Tables are read back with ``deltalake`` alone.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from deltalake import DeltaTable
from deltalake.exceptions import CommitFailedError

from spark_ext.delta.schema import DeltaSchemaError
from spark_ext.delta.view_offsets import OffsetRange, app_id
from spark_ext.delta.view_table import OFFSETS_METADATA, TOMBSTONE_COLUMN, StaleOffsetsError, ViewTable

SCHEMA = pa.schema([("key", pa.string()), ("value", pa.string()), ("partition", pa.int32()),
                    ("offset", pa.int64()), (TOMBSTONE_COLUMN, pa.bool_())])


def changes(*rows: tuple) -> pa.Table:
    """Rows of (key, value or None for a tombstone, partition, offset)."""
    return pa.Table.from_pylist([{"key": k, "value": v, "partition": p, "offset": o, TOMBSTONE_COLUMN: v is None}
                                 for k, v, p, o in rows], schema=SCHEMA)


def state(path) -> dict[str, str]:
    return {row["key"]: row["value"] for row in DeltaTable(str(path)).to_pyarrow_table().to_pylist()}


def test_values_upsert_their_key_and_tombstones_delete_it(tmp_path):
    view = ViewTable(str(tmp_path / "v"), "customers")
    view.apply(changes(("a", "1", 0, 0), ("b", "1", 0, 1), ("gone", None, 0, 2)), [OffsetRange(0, 0, 3)])
    assert state(tmp_path / "v") == {"a": "1", "b": "1"}
    view.apply(changes(("a", None, 0, 3), ("b", "2", 0, 4), ("c", "1", 0, 5)), [OffsetRange(0, 3, 6)])
    assert state(tmp_path / "v") == {"b": "2", "c": "1"}


def test_the_next_offsets_are_stored_in_the_commit_that_applies_the_records(tmp_path):
    view = ViewTable(str(tmp_path / "v"), "customers")
    result = view.apply(changes(("a", "1", 0, 4), ("b", "1", 1, 9)), [OffsetRange(0, 0, 5), OffsetRange(1, 7, 10)])
    table = DeltaTable(str(tmp_path / "v"))
    assert table.version() == result.table_version
    assert table.transaction_version(app_id("customers", 0)) == 5
    assert table.transaction_version(app_id("customers", 1)) == 10
    assert view.stored_offsets([0, 1, 2]) == {0: 5, 1: 10}
    last = table.history(1)[0]
    assert last["operation"] == "MERGE" and json.loads(last[OFFSETS_METADATA]) == {"0": [0, 5], "1": [7, 10]}


def test_a_slice_without_changes_still_moves_the_offsets_on(tmp_path):
    view = ViewTable(str(tmp_path / "v"), "customers")
    view.apply(changes(("a", "1", 0, 0)), [OffsetRange(0, 0, 1)])
    view.apply(changes(), [OffsetRange(0, 1, 4)])
    assert view.stored_offsets([0]) == {0: 4}
    assert state(tmp_path / "v") == {"a": "1"}


def test_changes_read_from_offsets_the_table_has_moved_past_are_refused(tmp_path):
    view = ViewTable(str(tmp_path / "v"), "customers")
    view.apply(changes(("a", "1", 0, 0)), [OffsetRange(0, 0, 1)])
    with pytest.raises(StaleOffsetsError, match="next offset is 1, not 0"):
        view.apply(changes(("a", "1", 0, 0)), [OffsetRange(0, 0, 1)])
    assert DeltaTable(str(tmp_path / "v")).version() == 1


def test_a_concurrent_commit_of_the_same_offsets_makes_the_second_fail(tmp_path):
    view = ViewTable(str(tmp_path / "v"), "customers")
    view.apply(changes(("a", "1", 0, 0)), [OffsetRange(0, 0, 1)])
    stale = DeltaTable(str(tmp_path / "v"))
    view.apply(changes(("a", "2", 0, 1)), [OffsetRange(0, 1, 2)])
    merge = stale.merge(changes(("a", "2", 0, 1)).drop_columns([TOMBSTONE_COLUMN]), "t.key = s.key",
                        source_alias="s", target_alias="t", commit_properties=_txn("customers", 0, 2))
    with pytest.raises(CommitFailedError):
        merge.when_matched_update_all().execute()
    assert DeltaTable(str(tmp_path / "v")).version() == 2


def test_a_key_twice_in_one_set_of_changes_is_refused(tmp_path):
    with pytest.raises(DeltaSchemaError, match="more than once"):
        ViewTable(str(tmp_path / "v"), "t").apply(changes(("a", "1", 0, 0), ("a", "2", 0, 1)), [OffsetRange(0, 0, 2)])


def test_a_table_of_another_view_is_refused(tmp_path):
    ViewTable(str(tmp_path / "v"), "customers").apply(changes(("a", "1", 0, 0)), [OffsetRange(0, 0, 1)])
    with pytest.raises(DeltaSchemaError, match="not a view of topic 'orders'"):
        ViewTable(str(tmp_path / "v"), "orders").stored_offsets([0])


def test_a_table_of_other_columns_is_refused(tmp_path):
    ViewTable(str(tmp_path / "v"), "customers").apply(changes(("a", "1", 0, 0)), [OffsetRange(0, 0, 1)])
    other = pa.Table.from_pylist([{"key": "b", "tier": "gold", TOMBSTONE_COLUMN: False}])
    with pytest.raises(DeltaSchemaError, match="give the view a table of its own"):
        ViewTable(str(tmp_path / "v"), "customers").apply(other, [OffsetRange(0, 1, 2)])


def test_earlier_versions_stay_readable_by_time_travel(tmp_path):
    view = ViewTable(str(tmp_path / "v"), "customers")
    first = view.apply(changes(("a", "1", 0, 0)), [OffsetRange(0, 0, 1)])
    view.apply(changes(("a", None, 0, 1)), [OffsetRange(0, 1, 2)])
    assert state(tmp_path / "v") == {}
    then = DeltaTable(str(tmp_path / "v"), version=first.table_version).to_pyarrow_table().to_pylist()
    assert [(r["key"], r["value"]) for r in then] == [("a", "1")]


def _txn(topic: str, partition: int, version: int):
    from deltalake.transaction import CommitProperties, Transaction

    return CommitProperties(app_transactions=[Transaction(app_id(topic, partition), version)])


def test_a_view_commit_planned_before_a_compaction_is_refused(tmp_path):
    from deltalake.transaction import CommitProperties

    from spark_ext.delta.optimize import compact
    from spark_ext.delta.rewrite_guard import guard_transaction

    path = str(tmp_path / "v")
    view = ViewTable(path, "customers")
    for n in range(3):
        view.apply(changes((f"k{n}", "1", 0, n)), [OffsetRange(0, n, n + 1)])
    stale = DeltaTable(path)  # a view run plans its MERGE here ...
    assert compact(path, target_size=1 << 20).committed  # ... a compaction commits first ...
    merge = stale.merge(changes(("k0", "2", 0, 3)).drop_columns([TOMBSTONE_COLUMN]), "t.key = s.key",
                        source_alias="s", target_alias="t",
                        commit_properties=CommitProperties(app_transactions=[guard_transaction(stale.version())]))
    with pytest.raises(CommitFailedError):  # ... so the MERGE must be planned again
        merge.when_matched_update_all().execute()
    assert state(path) == {"k0": "1", "k1": "1", "k2": "1"}
