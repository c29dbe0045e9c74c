"""Small-file compaction: fewer files, the same content, ``dataChange: false``, and safe beside writers."""

from __future__ import annotations

import json
import threading

import pytest
from deltalake import DeltaTable

from spark_ext.delta.optimize import compact
from tests.spark.delta.delta_tables import append, content, small_files_table


def log_actions(path, version: int) -> list[dict]:
    with open(f"{path}/_delta_log/{version:020d}.json", encoding="utf-8") as log:
        return [json.loads(line) for line in log if line.strip()]


def test_compaction_packs_small_files_and_keeps_the_content(tmp_path):
    path = str(tmp_path / "t")
    small_files_table(path, commits=12)
    before = content(DeltaTable(path))
    result = compact(path, target_size=1 << 20)
    table = DeltaTable(path)
    assert (result.before.files, result.after.files) == (12, 1)
    assert (result.files_removed, result.files_added) == (12, 1)
    assert content(table) == before
    assert result.table_version == table.version()


def test_the_compaction_commit_says_the_data_did_not_change(tmp_path):
    path = str(tmp_path / "t")
    small_files_table(path, commits=4)
    version = compact(path, target_size=1 << 20).table_version
    actions = log_actions(path, version)
    changes = [a.get("add") or a.get("remove") for a in actions if "add" in a or "remove" in a]
    assert len(changes) == 5 and all(change["dataChange"] is False for change in changes)
    assert next(a["commitInfo"] for a in actions if "commitInfo" in a)["spate.operation"] == "compaction"


def test_compaction_stays_within_each_partition(tmp_path):
    path = str(tmp_path / "t")
    small_files_table(path, commits=6, partition_by=("day",))
    before = content(DeltaTable(path))
    result = compact(path, target_size=1 << 20)
    assert (result.before.files, result.after.files) == (12, 2)
    assert content(DeltaTable(path)) == before


def test_a_table_of_big_files_has_nothing_to_compact(tmp_path):
    path = str(tmp_path / "t")
    small_files_table(path, commits=3)
    compact(path, target_size=1 << 20)
    version = DeltaTable(path).version()
    again = compact(path, target_size=100)  # every file is above this target already
    assert not again.committed and again.files_removed == 0
    assert DeltaTable(path).version() == version


def test_a_write_committed_while_compaction_planned_lands_too(tmp_path):
    path = str(tmp_path / "t")
    small_files_table(path, commits=5)
    planned = DeltaTable(path)  # compaction reads this version ...
    append(path, 50, 10, batch=5)  # ... an ingest batch commits ...
    result = compact(path, target_size=1 << 20, load=lambda: planned)  # ... then compaction commits over it
    table = DeltaTable(path)
    assert result.committed and result.attempts == 1
    assert [o for _, o, _ in content(table)] == list(range(60))
    assert table.transaction_version("writer") == 5


def test_a_write_committed_from_a_version_before_the_compaction_lands_too(tmp_path):
    from deltalake.transaction import CommitProperties, Transaction

    from spark_ext.delta.parquet_files import FileLayout, ParquetFilesWriter
    from tests.spark.delta.delta_tables import SCHEMA, rows

    path = str(tmp_path / "t")
    small_files_table(path, commits=5)
    writer_view = DeltaTable(path)  # the sink's driver reads the log ...
    compact(path, target_size=1 << 20)  # ... compaction commits ...
    files = ParquetFilesWriter(FileLayout(path, SCHEMA), "part-00005")
    files.write(rows(50, 10))
    writer_view.create_write_transaction([f.add_action() for f in files.close()], "append", SCHEMA,
                                         commit_properties=CommitProperties(app_transactions=[Transaction("w", 5)]))
    assert [o for _, o, _ in content(DeltaTable(path))] == list(range(60))


def test_a_conflicting_commit_makes_compaction_plan_again(tmp_path):
    path = str(tmp_path / "t")
    small_files_table(path, commits=5)
    stale = DeltaTable(path)
    compact(path, target_size=1 << 20)  # removes the files the stale plan would rewrite
    append(path, 50, 10, batch=5)
    append(path, 60, 10, batch=6)
    result = compact(path, target_size=1 << 20, load=lambda: stale)
    assert result.attempts == 2 and result.committed
    assert DeltaTable(path).get_add_actions().num_rows == 1  # the compacted file and the two new ones, packed
    assert [o for _, o, _ in content(DeltaTable(path))] == list(range(70))


@pytest.mark.timeout(120)
def test_compactions_beside_a_busy_writer_lose_and_duplicate_nothing(tmp_path):
    path = str(tmp_path / "t")
    small_files_table(path, commits=3)
    errors: list[BaseException] = []

    def ingest() -> None:
        try:
            for batch in range(3, 40):
                append(path, batch * 10, 10, batch=batch)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    writer = threading.Thread(target=ingest)
    writer.start()
    results = []
    while writer.is_alive() and len(results) < 30:
        results.append(compact(path, target_size=1 << 20))
    writer.join(60)
    assert not errors
    table = DeltaTable(path)
    assert [o for _, o, _ in content(table)] == list(range(400))
    assert table.transaction_version("writer") == 39
    assert any(r.committed for r in results)


def test_two_compactions_planned_from_one_version_never_both_land(tmp_path):
    path = str(tmp_path / "t")
    small_files_table(path, commits=5)
    stale = DeltaTable(path)
    first = compact(path, target_size=1 << 20)
    second = compact(path, target_size=1 << 20, load=lambda: stale)
    assert first.committed and second.attempts == 2 and not second.committed  # nothing left to compact
    assert [o for _, o, _ in content(DeltaTable(path))] == list(range(50))


def test_partition_values_of_every_type_survive_compaction(tmp_path):
    import datetime as dt

    import pyarrow as pa
    from deltalake import write_deltalake

    path = str(tmp_path / "t")
    for n in range(4):
        write_deltalake(path, pa.table({"d": [dt.date(2024, 5, 1 + n % 2)], "n": [n % 2],
                                        "ts": [dt.datetime(2024, 5, 1, 1, 2, 3)], "v": [f"v{n}"]}),
                        partition_by=["d", "n", "ts"], mode="append")
    before = sorted(DeltaTable(path).to_pyarrow_table().to_pylist(), key=lambda r: r["v"])
    result = compact(path, target_size=1 << 20)
    assert (result.before.files, result.after.files) == (4, 2)
    assert sorted(DeltaTable(path).to_pyarrow_table().to_pylist(), key=lambda r: r["v"]) == before


def test_files_written_before_a_column_was_added_get_nulls_there(tmp_path):
    import pyarrow as pa
    from deltalake import Field

    path = str(tmp_path / "t")
    small_files_table(path, commits=2)
    DeltaTable(path).alter.add_columns([Field.from_arrow(pa.field("extra", pa.string()))])
    result = compact(path, target_size=1 << 20)
    rows = DeltaTable(path).to_pyarrow_table().to_pylist()
    assert result.committed and len(rows) == 20 and all(r["extra"] is None for r in rows)
