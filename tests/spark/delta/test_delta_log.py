"""The driver's side of a Delta write: one commit per batch, app transactions, schema evolution.

Files come from :class:`ParquetFilesWriter` (the executors' side) and every
table is read back with ``deltalake`` on its own, independently of the code
that wrote it.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from spark_ext.delta.parquet_files import FileLayout, ParquetFilesWriter
from spark_ext.delta.schema import DeltaSchemaError
from spark_ext.delta.table import AppTransaction, DeltaLog

SCHEMA = pa.schema([("offset", pa.int64()), ("value", pa.binary()), ("day", pa.string())])


def rows(offsets, schema=SCHEMA, day="2024-05-01"):
    columns = {"offset": pa.array(offsets, pa.int64()), "value": pa.array([b"v%d" % o for o in offsets]),
               "day": pa.array([day] * len(offsets))}
    for field in schema:
        if field.name not in columns:
            columns[field.name] = pa.array([f"{field.name}-{o}" for o in offsets])
    return pa.RecordBatch.from_pydict({f.name: columns[f.name] for f in schema}, schema=schema)


def write_files(uri, *batches, schema=SCHEMA, partition_by=(), target=1 << 30, prefix="part-00000"):
    writer = ParquetFilesWriter(FileLayout(uri, schema, tuple(partition_by), target), prefix)
    for batch in batches:
        writer.write(batch)
    return writer.close()


def read_back(uri):
    return DeltaTable(uri).to_pyarrow_table().sort_by("offset")


def test_one_commit_holds_every_file_of_a_batch_and_its_app_transaction(tmp_path):
    uri = str(tmp_path / "t")
    files = write_files(uri, rows([0, 1]), prefix="part-00000") + write_files(uri, rows([2]), prefix="part-00001")
    result = DeltaLog(uri).commit(files, SCHEMA, (), app_transaction=AppTransaction("query-1", 0))
    table = DeltaTable(uri)
    assert (result.table_version, table.version()) == (0, 0)
    assert table.transaction_version("query-1") == 0
    assert read_back(uri).column("offset").to_pylist() == [0, 1, 2]
    assert len(table.file_uris()) == 2


def test_a_version_already_committed_is_skipped_and_its_files_stay_unreferenced(tmp_path):
    uri = str(tmp_path / "t")
    log = DeltaLog(uri)
    log.commit(write_files(uri, rows([0, 1])), SCHEMA, (), app_transaction=AppTransaction("q", 0))
    log.commit(write_files(uri, rows([2])), SCHEMA, (), app_transaction=AppTransaction("q", 1))
    replay = log.commit(write_files(uri, rows([2])), SCHEMA, (), app_transaction=AppTransaction("q", 1))
    older = log.commit(write_files(uri, rows([0, 1])), SCHEMA, (), app_transaction=AppTransaction("q", 0))
    assert replay.skipped and older.skipped
    assert DeltaTable(uri).version() == 1
    assert read_back(uri).column("offset").to_pylist() == [0, 1, 2]
    orphans = DeltaTable(uri).vacuum(retention_hours=0, enforce_retention_duration=False, full=True, dry_run=False)
    assert len(orphans) == 2
    assert len(list((tmp_path / "t").glob("*.parquet"))) == 2
    assert read_back(uri).column("offset").to_pylist() == [0, 1, 2]


def test_app_transactions_of_different_applications_are_independent(tmp_path):
    uri = str(tmp_path / "t")
    log = DeltaLog(uri)
    log.commit(write_files(uri, rows([0])), SCHEMA, (), app_transaction=AppTransaction("a", 5))
    result = log.commit(write_files(uri, rows([1])), SCHEMA, (), app_transaction=AppTransaction("b", 0))
    assert not result.skipped
    assert (log.app_version("a"), log.app_version("b"), log.app_version("c")) == (5, 0, None)


def test_an_empty_batch_still_records_its_version(tmp_path):
    uri = str(tmp_path / "t")
    DeltaLog(uri).commit([], SCHEMA, (), app_transaction=AppTransaction("q", 0))
    table = DeltaTable(uri)
    assert table.transaction_version("q") == 0
    assert table.to_pyarrow_table().num_rows == 0
    assert table.schema().to_arrow().names == SCHEMA.names


def test_partitioned_files_carry_their_values_in_the_log(tmp_path):
    uri = str(tmp_path / "t")
    batch = pa.concat_batches([rows([0, 1], day="2024-05-01"), rows([2], day="2024-05-02 10:00/x")])
    files = write_files(uri, batch, partition_by=("day",))
    DeltaLog(uri).commit(files, SCHEMA, ("day",), app_transaction=AppTransaction("q", 0))
    table = DeltaTable(uri)
    assert table.metadata().partition_columns == ["day"]
    back = read_back(uri)
    assert back.column("day").to_pylist() == ["2024-05-01", "2024-05-01", "2024-05-02 10:00/x"]
    assert sorted(p.name for p in (tmp_path / "t").iterdir() if p.name.startswith("day=")) == [
        "day=2024-05-01", "day=2024-05-02%2010%3A00%2Fx"]


def test_a_task_rolls_to_a_new_file_at_the_target_size(tmp_path):
    uri = str(tmp_path / "t")
    files = write_files(uri, *[rows(list(range(n * 1000, n * 1000 + 1000))) for n in range(5)], target=1024)
    assert len(files) == 5
    assert sum(f.num_records for f in files) == 5000
    DeltaLog(uri).commit(files, SCHEMA, ())
    assert read_back(uri).column("offset").to_pylist() == list(range(5000))


def test_merge_schema_adds_the_new_nullable_columns(tmp_path):
    uri = str(tmp_path / "t")
    log = DeltaLog(uri)
    log.commit(write_files(uri, rows([0])), SCHEMA, (), app_transaction=AppTransaction("q", 0))
    wider = SCHEMA.append(pa.field("country", pa.string(), nullable=False))
    result = log.commit(write_files(uri, rows([1], wider), schema=wider), wider, (),
                        app_transaction=AppTransaction("q", 1), merge_schema=True)
    assert result.schema_evolved
    back = read_back(uri)
    assert back.column("country").to_pylist() == [None, "country-1"]
    assert DeltaTable(uri).schema().to_arrow().field("country").nullable


def test_new_columns_without_merge_schema_are_refused_naming_the_option(tmp_path):
    uri = str(tmp_path / "t")
    log = DeltaLog(uri)
    log.commit(write_files(uri, rows([0])), SCHEMA, ())
    wider = SCHEMA.append(pa.field("country", pa.string()))
    with pytest.raises(DeltaSchemaError, match="'country'.*mergeSchema"):
        log.commit(write_files(uri, rows([1], wider), schema=wider), wider, ())
    assert DeltaTable(uri).version() == 0


def test_a_column_of_another_type_is_refused(tmp_path):
    uri = str(tmp_path / "t")
    DeltaLog(uri).commit(write_files(uri, rows([0])), SCHEMA, ())
    other = pa.schema([("offset", pa.string()), ("value", pa.binary()), ("day", pa.string())])
    with pytest.raises(DeltaSchemaError, match="'offset' is int64 in the table but string"):
        DeltaLog(uri).commit([], other, (), merge_schema=True)


def test_timestamps_are_stored_as_delta_timestamps_in_utc(tmp_path):
    uri = str(tmp_path / "t")
    schema = pa.schema([("offset", pa.int64()), ("ts", pa.timestamp("us", tz="Europe/Paris"))])
    moment = dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.timezone.utc)
    batch = pa.RecordBatch.from_pydict({"offset": [0], "ts": pa.array([moment], schema.field("ts").type)})
    from spark_ext.delta.schema import table_arrow_schema

    files = write_files(uri, batch, schema=table_arrow_schema(schema))
    DeltaLog(uri).commit(files, schema, ())
    assert DeltaTable(uri).to_pyarrow_table().column("ts").to_pylist() == [moment]


def test_a_write_lacking_some_of_the_table_columns_reads_back_with_nulls_there(tmp_path):
    uri = str(tmp_path / "t")
    log = DeltaLog(uri)
    log.commit(write_files(uri, rows([0])), SCHEMA, ())
    narrower = pa.schema([("offset", pa.int64()), ("value", pa.binary())])
    narrow = pa.RecordBatch.from_pydict({"offset": pa.array([1], pa.int64()), "value": [b"v1"]}, schema=narrower)
    log.commit(write_files(uri, narrow, schema=narrower), narrower, ())
    assert read_back(uri).column("day").to_pylist() == ["2024-05-01", None]
