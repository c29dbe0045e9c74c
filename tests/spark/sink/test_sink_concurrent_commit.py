"""Exactly-once with the driver ending a batch's transactions concurrently, and pooled clients, on a real broker."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from spark_ext.client_pool import ClientPool
from spark_ext.sink_commit import SinkCommitError
from spark_ext.sink_options import DEFAULT_BOOKKEEPING_TOPIC, parse_sink_options, sink_id_for_checkpoint
from spark_ext.sink_records import OutgoingRecord
from spark_ext.sink_task import TaskInfo, TaskWriter
from spate.client import Admin, Producer, TopicPartition
from tests.spark.kafka_data import create_topic
from tests.spark.sink.kafka_io import read_all
from tests.spark.sink.test_sink_replay import Sink
from tests.spark.sink.test_stream_write import write_json_files

TASKS = 6


def rows(*values: str) -> list[pa.RecordBatch]:
    return [pa.record_batch({"key": pa.array(list(values)), "value": pa.array(list(values))})]


def committed(broker, topic: str, partitions: int, expect: int) -> list[bytes]:
    return sorted(r.value for r in read_all(broker.bootstrap, {topic: partitions}, expect=expect, quiet_s=1.0))


def test_a_stream_over_eight_tasks_commits_every_row_once_across_restarts(spark, broker, unique, tmp_path) -> None:
    topic = unique("out")
    create_topic(broker.bootstrap, topic, 4)
    source, checkpoint = tmp_path / "in", tmp_path / "ckpt"

    def run() -> None:
        query = (
            spark.readStream.schema("n long").option("maxFilesPerTrigger", 3).json(str(source))
            .select(F.col("n").cast("string").alias("key"), F.format_string("row-%d", "n").alias("value"))
            .repartition(8)
            .writeStream.format("spate").option("bootstrap.servers", broker.bootstrap).option("topic", topic)
            .option("checkpointLocation", str(checkpoint)).option("commitParallelism", "3")
            .trigger(availableNow=True).start()
        )
        query.awaitTermination(180)
        assert query.exception() is None

    write_json_files(source, 0, 60)  # six files: two micro-batches
    run()
    write_json_files(source, 60, 30)  # the restarted query writes only the new files
    run()
    assert committed(broker, topic, 4, 90) == sorted(b"row-%d" % n for n in range(90))
    sink_id = sink_id_for_checkpoint(str(checkpoint))
    key = TopicPartition(DEFAULT_BOOKKEEPING_TOPIC, 0)
    with Admin(broker.bootstrap) as admin:
        recorded = [admin.list_group_offsets(f"{sink_id}-{p}", [key]).get(key) for p in range(8)]
    assert [r.offset for r in recorded if r is not None] == [2] * 8  # each task's last batch: the third


def test_a_refused_task_transaction_fails_the_batch_and_its_replay_writes_each_row_once(broker, unique) -> None:
    topic = unique("out")
    create_topic(broker.bootstrap, topic, 2)
    prefix = unique("sink")
    sink = Sink(broker.bootstrap, topic, prefix, commitParallelism="4")
    messages = [sink.task(p, 0, rows(f"p{p}")) for p in range(TASKS)]
    with Producer(broker.bootstrap, transactional_id=f"{prefix}-2") as usurper:
        usurper.init_transactions(30_000)  # fences task 2: its open transaction is aborted

    with pytest.raises(SinkCommitError, match=rf"1 of {TASKS} transaction\(s\) could not be committed \({prefix}-2\)"):
        sink.commit(messages, 0)
    assert committed(broker, topic, 2, TASKS - 1) == sorted(f"p{p}".encode() for p in range(TASKS) if p != 2)

    replay = [sink.task(p, 0, rows(f"p{p}")) for p in range(TASKS)]  # the restarted query replays batch 0
    sink.commit(replay, 0)
    assert [m.already_committed for m in replay] == [p != 2 for p in range(TASKS)]
    assert committed(broker, topic, 2, TASKS) == sorted(f"p{p}".encode() for p in range(TASKS))


def test_at_least_once_tasks_of_one_executor_share_a_pooled_producer(broker, unique) -> None:
    topic = unique("out")
    create_topic(broker.bootstrap, topic, 1)
    options = parse_sink_options(
        {"bootstrap.servers": broker.bootstrap, "topic": topic, "deliveryGuarantee": "at_least_once"}, streaming=True
    )
    pool = ClientPool(reaper=False)
    try:
        for task in range(3):
            records = iter([OutgoingRecord(topic, None, f"t{task}-{i}", None, ()) for i in range(10)])
            assert TaskWriter(options, pool=pool).write_at_least_once(records, TaskInfo(task)).rows == 10
        assert (pool.created, pool.reused, pool.idle_count) == (1, 2, 1)
    finally:
        pool.close()
    values = read_all(broker.bootstrap, {topic: 1}, isolation="read_uncommitted", expect=30, quiet_s=0.5)
    assert len(values) == 30
