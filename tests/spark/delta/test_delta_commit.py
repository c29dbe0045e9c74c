"""The streaming writer's driver side: which application a micro-batch belongs to, and one commit per batch."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from deltalake import DeltaTable

from spark_ext.delta.options import DeltaSinkOptions
from spark_ext.delta.parquet_files import FileLayout
from spark_ext.delta.writer import DeltaCommitError, DeltaStreamWriter, checkpoint_query_id
from spark_ext.sink_task import TaskInfo

SCHEMA = pa.schema([("offset", pa.int64())])


def writer(tmp_path, **options):
    table = str(tmp_path / "t")
    return DeltaStreamWriter(DeltaSinkOptions(table, **options), FileLayout(table, SCHEMA))


def task_message(sink, partition, offsets, query_id="query-a"):
    sink._task_info = lambda: TaskInfo(partition=partition, attempt=0, batch_id=0, query_id=query_id)
    return sink.write(iter([pa.RecordBatch.from_pydict({"offset": offsets}, schema=SCHEMA)]))


def test_the_tasks_query_id_is_the_app_id_and_the_batch_id_its_version(tmp_path):
    sink = writer(tmp_path)
    sink.commit([task_message(sink, 0, [0, 1]), task_message(sink, 1, [2])], 4)
    table = DeltaTable(str(tmp_path / "t"))
    assert table.transaction_version("query-a") == 4
    assert table.version() == 0
    assert sorted(table.to_pyarrow_table().column("offset").to_pylist()) == [0, 1, 2]


def test_txn_app_id_overrides_the_query_id(tmp_path):
    sink = writer(tmp_path, txn_app_id="orders-ingest")
    sink.commit([task_message(sink, 0, [0])], 0)
    table = DeltaTable(str(tmp_path / "t"))
    assert (table.transaction_version("orders-ingest"), table.transaction_version("query-a")) == (0, None)


def test_a_batch_without_tasks_takes_the_query_id_from_the_checkpoint(tmp_path):
    checkpoint = tmp_path / "ckpt"
    checkpoint.mkdir()
    (checkpoint / "metadata").write_text(json.dumps({"id": "query-from-checkpoint"}))
    writer(tmp_path, checkpoint_location=str(checkpoint)).commit([], 0)
    assert DeltaTable(str(tmp_path / "t")).transaction_version("query-from-checkpoint") == 0


def test_a_batch_whose_application_is_unknown_is_refused(tmp_path):
    with pytest.raises(DeltaCommitError, match="txnAppId"):
        writer(tmp_path).commit([], 0)
    assert checkpoint_query_id(str(tmp_path / "missing")) is None


def test_tasks_reporting_different_queries_are_refused(tmp_path):
    sink = writer(tmp_path)
    with pytest.raises(DeltaCommitError, match="different query ids"):
        sink.commit([task_message(sink, 0, [0], "q1"), task_message(sink, 1, [1], "q2")], 0)
