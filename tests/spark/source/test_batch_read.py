"""Batch reads with ``spark.read.format("spate")`` against a real broker.

The source is found by name (pyspark discovers ``pyspark_spate``), with no
``spark.dataSource.register`` call anywhere.
"""

from __future__ import annotations

import json

import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from tests.spark.kafka_data import (
    create_topic,
    produce,
    produce_transactions,
    produce_values,
    read_with_confluent,
    spate_rows,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

BASE_TS = 1_700_000_000_000


def reader(spark, broker, **options):
    read = spark.read.format("spate").option("kafka.bootstrap.servers", broker.bootstrap)
    for name, value in options.items():
        read = read.option(name, value)
    return read.load()


@pytest.fixture(scope="module")
def orders(broker):
    """A 3-partition topic of 30 records with keys (some null), headers and chosen timestamps."""
    name = "orders-batch"
    create_topic(broker.bootstrap, name, 3)
    records = []
    for i in range(30):
        record = {
            "value": f"order-{i}".encode(),
            "partition": i % 3,
            "timestamp": BASE_TS + i * 1000,
            "headers": [("source", b"web"), ("seq", str(i).encode())] if i % 4 else [("empty", None)],
        }
        if i % 5:
            record["key"] = f"customer-{i % 7}".encode()
        records.append(record)
    produce(broker.bootstrap, name, records)
    return name


def test_schema_is_the_kafka_source_schema_with_headers_when_asked(spark, broker, orders):
    plain = reader(spark, broker, subscribe=orders).schema
    with_headers = reader(spark, broker, subscribe=orders, includeHeaders="true").schema
    kafka_columns = [
        StructField("key", BinaryType()), StructField("value", BinaryType()), StructField("topic", StringType()),
        StructField("partition", IntegerType()), StructField("offset", LongType()),
        StructField("timestamp", TimestampType()), StructField("timestampType", IntegerType()),
    ]
    header = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
    assert plain == StructType(kafka_columns)
    assert with_headers == StructType(kafka_columns + [StructField("headers", ArrayType(header))])


def test_batch_read_of_three_partitions_equals_what_confluent_kafka_reads(spark, broker, orders):
    expected = read_with_confluent(broker.bootstrap, orders, 3, 30)
    rows = spate_rows(reader(spark, broker, subscribe=orders, includeHeaders="true"))
    assert len(expected) == 30
    assert rows == expected
    assert {row.timestamp for row in rows} == {BASE_TS + i * 1000 for i in range(30)}


def test_starting_and_ending_offsets_json_bound_each_partition(spark, broker, orders):
    starting = {orders: {"0": 2, "1": -2, "2": 9}}
    ending = {orders: {"0": 5, "1": 3, "2": -1}}
    rows = spate_rows(reader(spark, broker, subscribe=orders,
                             startingOffsets=json.dumps(starting), endingOffsets=json.dumps(ending)))
    assert [(r.partition, r.offset) for r in rows] == [(0, 2), (0, 3), (0, 4), (1, 0), (1, 1), (1, 2), (2, 9)]


def test_timestamps_select_the_first_offset_at_or_after_them(spark, broker, orders):
    # Record i has timestamp BASE_TS + i s and lives at offset i // 3 of partition i % 3.
    rows = spate_rows(reader(spark, broker, subscribe=orders,
                             startingTimestamp=str(BASE_TS + 10_500), endingTimestamp=str(BASE_TS + 20_000)))
    assert sorted(r.timestamp for r in rows) == [BASE_TS + i * 1000 for i in range(11, 20)]

    by_partition = {orders: {"0": BASE_TS + 27_000, "1": BASE_TS, "2": BASE_TS + 29_000}}
    rows = spate_rows(reader(spark, broker, subscribe=orders, startingOffsetsByTimestamp=json.dumps(by_partition)))
    assert sorted((r.partition, r.offset) for r in rows) == [(0, 9)] + [(1, o) for o in range(10)] + [(2, 9)]


def test_assign_reads_only_the_assigned_partitions(spark, broker, orders):
    rows = spate_rows(reader(spark, broker, assign=json.dumps({orders: [0, 2]})))
    assert {r.partition for r in rows} == {0, 2}
    assert len(rows) == 20


def test_subscribe_pattern_reads_every_matching_topic_and_nothing_else(spark, broker, unique):
    prefix = unique("pattern")
    for suffix, count in (("a", 2), ("b", 3)):
        create_topic(broker.bootstrap, f"{prefix}-{suffix}", 1)
        produce_values(broker.bootstrap, f"{prefix}-{suffix}", 1, count)
    create_topic(broker.bootstrap, f"other-{prefix}", 1)
    produce_values(broker.bootstrap, f"other-{prefix}", 1, 4)
    rows = spate_rows(reader(spark, broker, subscribePattern=f"{prefix}-.*"))
    assert sorted((r.topic, r.offset) for r in rows) == [
        (f"{prefix}-a", 0), (f"{prefix}-a", 1), (f"{prefix}-b", 0), (f"{prefix}-b", 1), (f"{prefix}-b", 2)
    ]


def test_min_partitions_splits_partitions_into_more_input_partitions_with_the_same_rows(spark, broker, orders):
    whole = reader(spark, broker, subscribe=orders, minRecordsPerPartition="1")
    split = reader(spark, broker, subscribe=orders, minPartitions="7")
    assert whole.rdd.getNumPartitions() == 3
    assert split.rdd.getNumPartitions() == 7
    assert spate_rows(split) == spate_rows(whole)


def test_short_partitions_are_read_by_one_task_with_the_same_rows(spark, broker, orders):
    packed = reader(spark, broker, subscribe=orders)
    assert packed.rdd.getNumPartitions() == 1
    assert spate_rows(packed) == spate_rows(reader(spark, broker, subscribe=orders, minRecordsPerPartition="1"))


def test_a_bounded_read_ending_on_transaction_markers_finishes_and_skips_aborted_records(spark, broker, unique):
    topic = unique("txn")
    create_topic(broker.bootstrap, topic, 1)
    produce_transactions(broker.bootstrap, topic, unique("writer"), [
        ([b"c1", b"c2"], True), ([b"a1", b"a2", b"a3"], False), ([b"c3"], True),
    ])
    # Offsets: c1 c2 COMMIT a1 a2 a3 ABORT c3 COMMIT -> the log ends with a marker at offset 8.
    committed = spate_rows(reader(spark, broker, subscribe=topic, **{"isolation.level": "read_committed"}))
    assert [(r.offset, r.value) for r in committed] == [(0, b"c1"), (1, b"c2"), (7, b"c3")]

    uncommitted = spate_rows(reader(spark, broker, subscribe=topic))
    assert [r.value for r in uncommitted] == [b"c1", b"c2", b"a1", b"a2", b"a3", b"c3"]

    # An explicit end offset on the ABORT marker (6) and one on a COMMIT marker (2).
    ends_on_abort = spate_rows(reader(spark, broker, subscribe=topic, endingOffsets=json.dumps({topic: {"0": 7}}),
                                      **{"kafka.isolation.level": "read_committed"}))
    assert [r.value for r in ends_on_abort] == [b"c1", b"c2"]
    ends_on_commit = spate_rows(reader(spark, broker, subscribe=topic, endingOffsets=json.dumps({topic: {"0": 3}})))
    assert [r.value for r in ends_on_commit] == [b"c1", b"c2"]


def test_an_empty_topic_reads_as_an_empty_dataframe(spark, broker, unique):
    topic = unique("empty")
    create_topic(broker.bootstrap, topic, 2)
    assert reader(spark, broker, subscribe=topic).count() == 0
