"""Streaming reads with ``spark.readStream.format("spate")`` against a real broker.

Micro-batches are observed with ``foreachBatch`` (one entry per batch id) or a
memory sink; triggers are short so the file stays quick.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import functions as F

from spate.client import Admin, TopicPartition
from tests.spark.kafka_data import add_partitions, create_topic, produce, produce_values
from tests.spate.cli.conftest import spate
from tests.spate.cli.output import lag_by_partition

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def stream(spark, broker, **options):
    read = spark.readStream.format("spate").option("kafka.bootstrap.servers", broker.bootstrap)
    for name, value in {"startingOffsets": "earliest", **options}.items():
        read = read.option(name, value)
    return read.load()


def run_available_now(df, checkpoint: str, measure: Callable) -> dict[int, object]:
    """Run to completion under Trigger.AvailableNow; ``measure(batch_df)`` of every micro-batch by id."""
    seen: dict[int, object] = {}

    def record(batch_df, batch_id):
        seen[batch_id] = measure(batch_df)

    query = df.writeStream.foreachBatch(record).option("checkpointLocation", checkpoint).trigger(
        availableNow=True).start()
    finished = query.awaitTermination(180)
    assert finished, "Trigger.AvailableNow did not stop by itself"
    assert query.exception() is None
    return seen


def wait_for(condition: Callable[[], bool], timeout: float = 60, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_max_offsets_per_trigger_splits_available_now_into_limited_batches_and_stops(spark, broker, unique, tmp_path):
    topic = unique("offsets")
    create_topic(broker.bootstrap, topic, 3)
    produce_values(broker.bootstrap, topic, 3, 40)
    counts = run_available_now(stream(spark, broker, subscribe=topic, maxOffsetsPerTrigger="25"),
                               str(tmp_path / "ckpt"), lambda df: df.count())
    non_empty = [n for n in counts.values() if n]
    assert sum(non_empty) == 120
    assert max(non_empty) <= 25
    assert len(non_empty) >= 5


def test_max_bytes_per_trigger_limits_the_record_bytes_of_every_batch(spark, broker, unique, tmp_path):
    topic = unique("bytes")
    create_topic(broker.bootstrap, topic, 2)
    produce_values(broker.bootstrap, topic, 2, 30, size=100)
    limit = 1_000

    def measure(df):
        size = F.coalesce(F.length("key"), F.lit(0)) + F.coalesce(F.length("value"), F.lit(0))
        row = df.agg(F.count(F.lit(1)).alias("rows"), F.sum(size).alias("bytes")).first()
        return row.rows, row.bytes or 0

    batches = run_available_now(stream(spark, broker, subscribe=topic, maxBytesPerTrigger=str(limit)),
                                str(tmp_path / "ckpt"), measure)
    non_empty = [(rows, size) for rows, size in batches.values() if rows]
    assert sum(rows for rows, _ in non_empty) == 60
    assert all(size <= limit for _, size in non_empty), non_empty
    assert len(non_empty) >= 6


def test_min_offsets_per_trigger_holds_small_amounts_back_until_the_max_trigger_delay(spark, broker, unique, tmp_path):
    topic = unique("min")
    create_topic(broker.bootstrap, topic, 1)
    produce_values(broker.bootstrap, topic, 1, 30)
    batches: dict[int, int] = {}
    started = time.monotonic()
    query = (
        stream(spark, broker, subscribe=topic, minOffsetsPerTrigger="1000", maxTriggerDelay="2s")
        .writeStream.foreachBatch(lambda df, batch_id: batches.__setitem__(batch_id, df.count()))
        .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(processingTime="200 milliseconds").start()
    )
    try:
        wait_for(lambda: sum(batches.values()) == 30, what="the delayed batch")
        waited = time.monotonic() - started
    finally:
        query.stop()
    # Everything arrives in one batch, released by the delay rather than by reaching 1000 offsets.
    assert [n for n in batches.values() if n] == [30]
    assert waited >= 2


def test_new_partitions_and_new_pattern_topics_are_read_between_micro_batches(spark, broker, unique, tmp_path):
    prefix = unique("grow")
    first, second = f"{prefix}-a", f"{prefix}-b"
    create_topic(broker.bootstrap, first, 1)
    produce_values(broker.bootstrap, first, 1, 3)
    name = prefix.replace("-", "_").replace(".", "_")
    query = (
        stream(spark, broker, subscribePattern=f"{prefix}-.*")
        .writeStream.format("memory").queryName(name).option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(processingTime="300 milliseconds").start()
    )
    try:
        def rows():
            return {(r.topic, r.partition, r.value) for r in spark.sql(f"select * from {name}").collect()}

        wait_for(lambda: len(rows()) == 3, what="the first records")
        add_partitions(broker.bootstrap, first, 3)
        create_topic(broker.bootstrap, second, 1)
        produce(broker.bootstrap, first, [{"value": b"new-1", "partition": 1}, {"value": b"new-2", "partition": 2}])
        produce(broker.bootstrap, second, [{"value": b"other-topic", "partition": 0}])
        wait_for(lambda: len(rows()) == 6, what="records of the new partitions and topic")
        assert {(t, p, v) for t, p, v in rows() if v.startswith((b"new", b"other"))} == {
            (first, 1, b"new-1"), (first, 2, b"new-2"), (second, 0, b"other-topic")
        }
    finally:
        query.stop()


def test_fail_on_data_loss_names_the_partition_and_lost_offsets_or_continues_from_the_log_start(
    spark, broker, unique, tmp_path
):
    topic = unique("loss")
    create_topic(broker.bootstrap, topic, 1)
    produce_values(broker.bootstrap, topic, 1, 20)
    checkpoint = str(tmp_path / "ckpt")
    first_run = run_available_now(stream(spark, broker, subscribe=topic), checkpoint, lambda df: df.count())
    assert sum(first_run.values()) == 20

    # While the query is stopped, 20 more records arrive and DeleteRecords removes offsets below 30.
    produce_values(broker.bootstrap, topic, 1, 20)
    with Admin(broker.bootstrap) as admin:
        assert admin.delete_records({TopicPartition(topic, 0): 30}) == {TopicPartition(topic, 0): 30}

    failing_checkpoint = str(tmp_path / "ckpt-copy")
    shutil.copytree(checkpoint, failing_checkpoint)
    query = stream(spark, broker, subscribe=topic).writeStream.format("noop").option(
        "checkpointLocation", failing_checkpoint).trigger(availableNow=True).start()
    with pytest.raises(StreamingQueryException) as failure:
        query.awaitTermination(120)
    message = str(failure.value)
    assert f"Partition {topic}-0 lost data" in message
    assert "[20, 30)" in message

    offsets = run_available_now(stream(spark, broker, subscribe=topic, failOnDataLoss="false"), checkpoint,
                                lambda df: [r.offset for r in df.select("offset").collect()])
    assert sorted(o for batch in offsets.values() for o in batch) == list(range(30, 40))


def test_group_id_receives_each_batch_end_offsets_so_lag_tools_see_the_query(spark, broker, unique, tmp_path):
    topic, group = unique("lag"), unique("group")
    create_topic(broker.bootstrap, topic, 2)
    produce_values(broker.bootstrap, topic, 2, 10)
    query = (
        stream(spark, broker, subscribe=topic, groupId=group)
        .writeStream.format("noop").option("checkpointLocation", str(tmp_path / "ckpt"))
        .trigger(processingTime="300 milliseconds").start()
    )
    tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
    try:
        with Admin(broker.bootstrap) as admin:
            def committed():
                return {tp: meta.offset for tp, meta in admin.list_group_offsets(group, tps).items()}

            wait_for(lambda: committed() == {tps[0]: 10, tps[1]: 10}, what="the group commit")
            query.stop()
            produce(broker.bootstrap, topic, [{"value": b"late", "partition": 0} for _ in range(5)])
            ends = admin.list_offsets({tp: -1 for tp in tps})
            lag = {tp: ends[tp].offset - offset for tp, offset in committed().items()}
            assert lag == {tps[0]: 5, tps[1]: 0}
        # What an operator sees: `spate groups describe` reports the same lag per partition.
        described = spate("groups", "describe", group, bootstrap=broker.bootstrap)
        assert described.returncode == 0, described
        assert lag_by_partition(described.stdout, topic) == {0: 5, 1: 0}
    finally:
        query.stop()
