"""``df.write.format("spate")``: Spark's Kafka sink contract, read back with confluent-kafka."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from tests.spark.kafka_data import create_topic
from tests.spark.sink.kafka_io import read_all


def test_topic_option_with_string_key_and_value(spark, broker, unique) -> None:
    topic = unique("out")
    create_topic(broker.bootstrap, topic, 2)
    rows = [(f"k{i}", f"value {i}") for i in range(50)]
    (spark.createDataFrame(rows, "key string, value string")
     .write.format("spate").mode("append")
     .option("kafka.bootstrap.servers", broker.bootstrap).option("topic", topic).save())

    read = read_all(broker.bootstrap, {topic: 2}, expect=len(rows))
    assert sorted((r.key, r.value) for r in read) == sorted((k.encode(), v.encode()) for k, v in rows)


def test_topic_column_binary_columns_partition_and_headers(spark, broker, unique) -> None:
    first, second = unique("a"), unique("b")
    create_topic(broker.bootstrap, first, 3)
    create_topic(broker.bootstrap, second, 1)
    rows = [
        (first, bytes([i]), b"payload-%d" % i, i % 3, [("trace", b"t%d" % i), ("empty", None)]) for i in range(30)
    ] + [(second, None, b"tail-%d" % i, None, []) for i in range(5)]
    df = spark.createDataFrame(
        rows,
        "topic string, key binary, value binary, partition int, headers array<struct<key: string, value: binary>>",
    )
    df.write.format("spate").mode("append").option("bootstrap.servers", broker.bootstrap).save()

    read = read_all(broker.bootstrap, {first: 3, second: 1}, expect=len(rows))
    got = sorted((r.topic, r.key or b"", r.value, r.partition, r.headers) for r in read)
    want = sorted(
        (t, k or b"", v, p if p is not None else 0, tuple(h)) for t, k, v, p, h in rows
    )
    assert got == want


def test_null_values_are_written_as_tombstones(spark, broker, unique) -> None:
    topic = unique("tomb")
    create_topic(broker.bootstrap, topic)
    df = spark.createDataFrame([("k", None)], "key string, value binary")
    df.write.format("spate").mode("append").option("bootstrap.servers", broker.bootstrap).option("topic", topic).save()
    [record] = read_all(broker.bootstrap, {topic: 1}, expect=1)
    assert (record.key, record.value) == (b"k", None)


def test_exactly_once_batch_write_commits_the_job_as_a_whole(spark, broker, unique) -> None:
    topic = unique("eos")
    create_topic(broker.bootstrap, topic, 2)
    df = spark.range(0, 400, numPartitions=4).select(F.col("id").cast("string").alias("value"))
    (df.write.format("spate").mode("append").option("bootstrap.servers", broker.bootstrap)
     .option("topic", topic).option("deliveryGuarantee", "exactly_once").save())

    read = read_all(broker.bootstrap, {topic: 2}, expect=400)
    assert sorted(int(r.value) for r in read) == list(range(400))


@pytest.mark.parametrize(
    ("select", "options", "named"),
    [
        ("cast(id as string) as key", {"topic": "t"}, "spate sink column 'value'"),
        ("cast(id as string) as value", {}, "spate sink column 'topic'"),
        ("id as value", {"topic": "t"}, "spate sink column 'value'"),
        ("cast(id as string) as value, 'x' as partition", {"topic": "t"}, "spate sink column 'partition'"),
        ("cast(id as string) as value, 'h' as headers", {"topic": "t"}, "spate sink column 'headers'"),
        ("cast(id as string) as value", {"topic": "t", "deliveryGuarantee": "maybe"},
         "spate sink option 'deliveryGuarantee'"),
        ("cast(id as string) as value", {"topic": "t", "kafka.linger.ms": "soon"},
         "spate sink option 'kafka.linger.ms'"),
    ],
)
def test_bad_columns_and_options_fail_naming_them(spark, broker, select, options, named) -> None:
    writer = spark.range(3).selectExpr(*select.split(", ")).write.format("spate").mode("append")
    writer = writer.option("bootstrap.servers", broker.bootstrap)
    for name, value in options.items():
        writer = writer.option(name, value)
    with pytest.raises(Exception) as info:
        writer.save()
    assert named in str(info.value)


def test_overwrite_mode_is_refused(spark, broker) -> None:
    df = spark.range(1).selectExpr("cast(id as string) as value")
    with pytest.raises(Exception) as info:
        df.write.format("spate").mode("overwrite").option("bootstrap.servers", broker.bootstrap).option(
            "topic", "t").save()
    assert "append" in str(info.value)


def test_null_topic_in_the_data_fails_the_write(spark, broker, unique) -> None:
    df = spark.createDataFrame([(None, "v")], "topic string, value string")
    with pytest.raises(Exception) as info:
        df.write.format("spate").mode("append").option("bootstrap.servers", broker.bootstrap).save()
    assert "spate sink column 'topic'" in str(info.value)
