"""The executors' side: Parquet files in the table's storage, described for the log."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_ext.delta.options import DeltaSinkOptions
from spark_ext.delta.parquet_files import FileLayout, ParquetFilesWriter
from spark_ext.delta.partition_values import directory_name, serialize
from spark_ext.delta.writer import DeltaCommitMessage, InjectedTaskFailure, write_task
from spark_ext.sink_task import TaskInfo

SCHEMA = pa.schema([("partition", pa.int32()), ("offset", pa.int64()), ("page", pa.string()),
                    ("headers", pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())])))])


def batch(offsets, page="/home", partition=0):
    return pa.RecordBatch.from_pydict({
        "partition": pa.array([partition] * len(offsets), pa.int32()),
        "offset": pa.array(offsets, pa.int64()),
        "page": pa.array([page if o % 5 else None for o in offsets]),
        "headers": pa.array([[] for _ in offsets], SCHEMA.field("headers").type),
    }, schema=SCHEMA)


def test_files_are_zstd_parquet_with_exact_statistics(tmp_path):
    writer = ParquetFilesWriter(FileLayout(str(tmp_path), SCHEMA), "part-00007", clock=lambda: 1_700_000_000.5)
    writer.write(batch([3, 4, 5]))
    writer.write(batch([9, 10], page="/about"))
    [data_file] = writer.close()
    assert data_file.path.startswith("part-00007-") and data_file.path.endswith(".c000.zstd.parquet")
    assert data_file.size == (tmp_path / data_file.path).stat().st_size
    assert data_file.modification_time == 1_700_000_000_500
    metadata = pq.ParquetFile(tmp_path / data_file.path).metadata
    assert metadata.row_group(0).column(0).compression == "ZSTD"
    stats = json.loads(data_file.stats)
    assert stats == {
        "numRecords": 5,
        "minValues": {"partition": 0, "offset": 3, "page": "/about"},
        "maxValues": {"partition": 0, "offset": 10, "page": "/home"},
        "nullCount": {"partition": 0, "offset": 0, "page": 2},
    }


def test_long_strings_get_no_bounds(tmp_path):
    writer = ParquetFilesWriter(FileLayout(str(tmp_path), SCHEMA), "part-00000")
    writer.write(batch([1], page="/x" * 40))
    stats = json.loads(writer.close()[0].stats)
    assert "page" not in stats["minValues"] and "page" not in stats["maxValues"]


def test_rows_go_to_one_file_per_partition_value_without_the_partition_column(tmp_path):
    writer = ParquetFilesWriter(FileLayout(str(tmp_path), SCHEMA, ("partition",)), "part-00000")
    writer.write(pa.concat_batches([batch([0, 1], partition=0), batch([2], partition=1)]))
    files = sorted(writer.close(), key=lambda f: f.path)
    assert [(f.partition_values, f.num_records) for f in files] == [({"partition": "0"}, 2), ({"partition": "1"}, 1)]
    assert [f.path.split("/")[0] for f in files] == ["partition=0", "partition=1"]
    assert pq.read_table(tmp_path / files[0].path).column_names == ["offset", "page", "headers"]


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, None), (True, "true"), (7, "7"), ("a b", "a b"),
     (__import__("datetime").date(2024, 5, 1), "2024-05-01")],
)
def test_partition_values_are_spelled_as_the_delta_protocol_says(value, text):
    assert serialize(value) == text


def test_null_and_unsafe_partition_values_get_hive_directory_names():
    assert directory_name("day", None) == "day=__HIVE_DEFAULT_PARTITION__"
    assert directory_name("path", "a/b c") == "path=a%2Fb%20c"


def task(attempt):
    return TaskInfo(partition=2, attempt=attempt, batch_id=5, query_id="q-1")


def test_a_task_reports_its_files_and_query(tmp_path):
    options = DeltaSinkOptions(str(tmp_path))
    message = write_task(options, FileLayout(str(tmp_path), SCHEMA), iter([batch([1, 2])]), task(0))
    assert isinstance(message, DeltaCommitMessage)
    assert (message.partition, message.query_id, len(message.files)) == (2, "q-1", 1)


def test_the_fault_injection_fails_only_a_first_attempt_after_it_wrote_its_files(tmp_path):
    options = DeltaSinkOptions(str(tmp_path), test_fail_task_probability=1.0)
    layout = FileLayout(str(tmp_path), SCHEMA)
    with pytest.raises(InjectedTaskFailure, match="unreferenced"):
        write_task(options, layout, iter([batch([1])]), task(0), rng=lambda: 0.5)
    assert len(list(tmp_path.glob("*.parquet"))) == 1
    retried = write_task(options, layout, iter([batch([1])]), task(1), rng=lambda: 0.5)
    assert len(retried.files) == 1
