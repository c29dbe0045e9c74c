"""``df.writeStream.format("spate")``: micro-batches written in transactions, seen once by read_committed."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import functions as F

from spark_ext.sink_options import DEFAULT_BOOKKEEPING_TOPIC, sink_id_for_checkpoint
from spate.client import Admin, TopicPartition
from tests.spark.kafka_data import create_topic
from tests.spark.sink.kafka_io import produce, read_all


def write_json_files(directory: Path, first: int, count: int, per_file: int = 10) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for start in range(first, first + count, per_file):
        lines = [json.dumps({"n": n}) for n in range(start, min(start + per_file, first + count))]
        (directory / f"part-{start:06d}.json").write_text("\n".join(lines) + "\n")


def run_file_copy(spark, broker, source: Path, topic: str, checkpoint: Path, **options: str) -> None:
    """One Trigger.AvailableNow run of ``json files → spate``, two files per micro-batch."""
    stream = (
        spark.readStream.schema("n long").option("maxFilesPerTrigger", 2).json(str(source))
        .select(F.col("n").cast("string").alias("key"), F.format_string("row-%d", "n").alias("value"))
        .repartition(3)
        .writeStream.format("spate")
        .option("bootstrap.servers", broker.bootstrap)
        .option("topic", topic)
        .option("checkpointLocation", str(checkpoint))
    )
    for name, value in options.items():
        stream = stream.option(name, value)
    query = stream.trigger(availableNow=True).start()
    query.awaitTermination(180)
    if query.exception() is not None:
        raise query.exception()


def test_exactly_once_stream_writes_every_row_once_across_restarts(spark, broker, unique, tmp_path) -> None:
    topic = unique("out")
    create_topic(broker.bootstrap, topic, 2)
    source, checkpoint = tmp_path / "in", tmp_path / "ckpt"
    write_json_files(source, 0, 60)
    run_file_copy(spark, broker, source, topic, checkpoint)
    write_json_files(source, 60, 40)
    run_file_copy(spark, broker, source, topic, checkpoint)

    read = read_all(broker.bootstrap, {topic: 2}, expect=100)
    assert sorted(r.value for r in read) == sorted(b"row-%d" % n for n in range(100))


def test_each_task_records_its_last_batch_in_its_bookkeeping_group(spark, broker, unique, tmp_path) -> None:
    topic = unique("out")
    create_topic(broker.bootstrap, topic)
    source, checkpoint = tmp_path / "in", tmp_path / "ckpt"
    write_json_files(source, 0, 40)  # four files: two micro-batches, 0 and 1
    run_file_copy(spark, broker, source, topic, checkpoint)

    sink_id = sink_id_for_checkpoint(str(checkpoint))
    key = TopicPartition(DEFAULT_BOOKKEEPING_TOPIC, 0)
    with Admin(broker.bootstrap) as admin:
        recorded = {p: admin.list_group_offsets(f"{sink_id}-{p}", [key]).get(key) for p in range(3)}
    assert {p: c.offset for p, c in recorded.items() if c is not None} == {0: 1, 1: 1, 2: 1}
    assert all(c.metadata.startswith("spate sink batch 1 of query ") for c in recorded.values())
    assert len(read_all(broker.bootstrap, {topic: 1}, expect=40)) == 40


def test_at_least_once_stream_writes_without_transactions(spark, broker, unique, tmp_path) -> None:
    topic = unique("out")
    create_topic(broker.bootstrap, topic)
    source = tmp_path / "in"
    write_json_files(source, 0, 30)
    run_file_copy(spark, broker, source, topic, tmp_path / "ckpt", deliveryGuarantee="at_least_once")

    read = read_all(broker.bootstrap, {topic: 1}, isolation="read_uncommitted", expect=30)
    assert sorted(r.value for r in read) == sorted(b"row-%d" % n for n in range(30))


def test_spate_to_spate_with_an_aggregation_in_complete_mode(spark, broker, unique, tmp_path) -> None:
    source, sink = unique("in"), unique("counts")
    create_topic(broker.bootstrap, source, 2)
    create_topic(broker.bootstrap, sink)
    produce(broker.bootstrap, source, [b"apple", b"pear", b"apple", b"fig", b"apple", b"pear"], partitions=2)
    query = (
        spark.readStream.format("spate")
        .option("bootstrap.servers", broker.bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
        .groupBy(F.col("value").cast("string").alias("fruit"))
        .count()
        .select(F.col("fruit").alias("key"), F.col("count").cast("string").alias("value"))
        .writeStream.format("spate")
        .outputMode("complete")
        .option("bootstrap.servers", broker.bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(180)
    assert query.exception() is None

    read = read_all(broker.bootstrap, {sink: 1}, expect=3)
    assert {r.key: r.value for r in read} == {b"apple": b"3", b"pear": b"2", b"fig": b"1"}
