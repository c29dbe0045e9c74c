"""``writeStream.format("spate-delta")``: a topic streamed into a Delta table, exactly once.

Each test streams from a real broker with the run's SparkSession and reads
the table back with ``deltalake`` alone.
"""

from __future__ import annotations

import json
import shutil

import pytest
from deltalake import DeltaTable
from pyspark.sql import functions as F

from spark_ext.delta.sink import SpateDeltaDataSource
from tests.spark.kafka_data import create_topic, produce, produce_values

PARTITIONS = 3


@pytest.fixture(autouse=True)
def registered(spark):
    spark.dataSource.register(SpateDeltaDataSource)


def topic_stream(spark, broker, topic):
    return (spark.readStream.format("spate").option("kafka.bootstrap.servers", broker.bootstrap)
            .option("subscribe", topic).option("startingOffsets", "earliest").option("includeHeaders", "true")
            .load())


def run_available_now(frame, table, checkpoint, **options):
    writer = frame.writeStream.format("spate-delta").option("checkpointLocation", str(checkpoint))
    for name, value in options.items():
        writer = writer.option(name, value)
    query = writer.trigger(availableNow=True).start(str(table))
    assert query.awaitTermination(180), "the query did not finish"
    return query


def table_rows(table):
    rows = DeltaTable(str(table)).to_pyarrow_table().to_pylist()
    return sorted(rows, key=lambda r: (r["partition"], r["offset"]))


def test_a_topic_streamed_into_delta_equals_the_topic_exactly(spark, broker, topic_name, tmp_path):
    topic = topic_name()
    create_topic(broker.bootstrap, topic, PARTITIONS)
    produce_values(broker.bootstrap, topic, PARTITIONS, 200)
    produce(broker.bootstrap, topic, [{"value": b"with-headers", "key": None, "partition": 0,
                                       "headers": [("h", b"1"), ("n", None)]}])
    source = spark.read.format("spate").option("kafka.bootstrap.servers", broker.bootstrap) \
        .option("subscribe", topic).option("includeHeaders", "true").load()
    expected = sorted((r.asDict(recursive=True) for r in source.collect()),
                      key=lambda r: (r["partition"], r["offset"]))

    query = run_available_now(topic_stream(spark, broker, topic), tmp_path / "t", tmp_path / "ckpt")
    rows = table_rows(tmp_path / "t")
    assert len(rows) == PARTITIONS * 200 + 1
    assert [_comparable(r) for r in rows] == [_comparable(r) for r in expected]
    table = DeltaTable(str(tmp_path / "t"))
    assert table.schema().to_arrow().names == ["key", "value", "topic", "partition", "offset", "timestamp",
                                               "timestampType", "headers"]
    assert table.transaction_version(query.id) is not None


def _comparable(row):
    headers = [(h["key"], h["value"]) for h in row["headers"] or []]
    moment = row["timestamp"]
    if moment.tzinfo is not None:  # Spark's rows hold local wall-clock time, the table UTC instants
        moment = moment.astimezone().replace(tzinfo=None)
    return (row["topic"], row["partition"], row["offset"], row["key"], row["value"], moment,
            row["timestampType"], headers)


def test_a_replayed_batch_adds_nothing(spark, broker, topic_name, tmp_path):
    topic = topic_name()
    create_topic(broker.bootstrap, topic, PARTITIONS)
    produce_values(broker.bootstrap, topic, PARTITIONS, 50)
    checkpoint = tmp_path / "ckpt"
    query = run_available_now(topic_stream(spark, broker, topic), tmp_path / "t", checkpoint)
    batches = sorted(int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit())
    version = DeltaTable(str(tmp_path / "t")).version()
    # As if the driver died after the Delta commit and before Spark recorded the batch as done.
    (checkpoint / "commits" / str(batches[-1])).unlink()
    (checkpoint / "commits" / f".{batches[-1]}.crc").unlink(missing_ok=True)
    replayed = run_available_now(topic_stream(spark, broker, topic), tmp_path / "t", checkpoint)
    assert replayed.id == query.id
    table = DeltaTable(str(tmp_path / "t"))
    assert table.version() == version
    assert table.transaction_version(query.id) == batches[-1]
    rows = table_rows(tmp_path / "t")
    assert [(r["partition"], r["offset"]) for r in rows] == [(p, o) for p in range(PARTITIONS) for o in range(50)]
    removed = table.vacuum(retention_hours=0, enforce_retention_duration=False, full=True, dry_run=False)
    assert removed, "the replayed batch's files are unreferenced and vacuum removes them"
    assert len(table_rows(tmp_path / "t")) == PARTITIONS * 50


def test_a_restarted_query_appends_only_the_new_records(spark, broker, topic_name, tmp_path):
    topic = topic_name()
    create_topic(broker.bootstrap, topic, PARTITIONS)
    produce_values(broker.bootstrap, topic, PARTITIONS, 30)
    run_available_now(topic_stream(spark, broker, topic), tmp_path / "t", tmp_path / "ckpt")
    produce_values(broker.bootstrap, topic, PARTITIONS, 20)
    run_available_now(topic_stream(spark, broker, topic), tmp_path / "t", tmp_path / "ckpt")
    rows = table_rows(tmp_path / "t")
    assert [(r["partition"], r["offset"]) for r in rows] == [(p, o) for p in range(PARTITIONS) for o in range(50)]


def decoded(frame, *fields):
    schema = ", ".join(f"{name} {kind}" for name, kind in fields)
    parsed = F.from_json(F.col("value").cast("string"), schema).alias("v")
    return frame.select("partition", "offset", parsed).select("partition", "offset", "v.*")


def test_a_decoded_projection_is_partitioned_and_merge_schema_adds_columns(spark, broker, topic_name, tmp_path):
    topic = topic_name()
    create_topic(broker.bootstrap, topic, 1)
    events = [{"page": f"/p{n % 3}", "day": f"2024-05-0{1 + n % 2}", "ms": n} for n in range(40)]
    produce(broker.bootstrap, topic, [{"value": json.dumps(e).encode(), "partition": 0} for e in events])
    frame = topic_stream(spark, broker, topic)
    run_available_now(decoded(frame, ("page", "string"), ("day", "string")), tmp_path / "t", tmp_path / "c1",
                      partitionBy="day")
    produce(broker.bootstrap, topic, [{"value": json.dumps({**e, "country": "NL"}).encode(), "partition": 0}
                                      for e in events[:5]])
    wider = decoded(frame, ("page", "string"), ("day", "string"), ("country", "string"))
    with pytest.raises(Exception, match="mergeSchema"):
        run_available_now(wider, tmp_path / "t", tmp_path / "c2")
    shutil.rmtree(tmp_path / "c2")
    run_available_now(wider, tmp_path / "t", tmp_path / "c2", mergeSchema="true")

    table = DeltaTable(str(tmp_path / "t"))
    assert table.metadata().partition_columns == ["day"]
    rows = table.to_pyarrow_table().to_pylist()
    # The first query's 40 rows, then the second query's 45 (it read the topic from the start).
    assert len(rows) == 85
    assert sorted(r["offset"] for r in rows if r["country"] == "NL") == [40, 41, 42, 43, 44]
    for row in rows:
        event = events[row["offset"] % 40]
        assert (row["page"], row["day"]) == (event["page"], event["day"])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"partitionBy": "nope"}, "partitionBy.*'nope' is not a column"),
        ({"targetFileSize": "-1"}, "targetFileSize"),
        ({"mergeSchema": "maybe"}, "mergeSchema"),
    ],
)
def test_a_bad_option_stops_the_query_naming_it(spark, broker, topic_name, tmp_path, options, message):
    topic = topic_name()
    create_topic(broker.bootstrap, topic, 1)
    produce_values(broker.bootstrap, topic, 1, 3)
    with pytest.raises(Exception, match=message):
        run_available_now(topic_stream(spark, broker, topic), tmp_path / "t", tmp_path / "ckpt", **options)
    assert not (tmp_path / "t" / "_delta_log").exists()


def test_a_batch_write_with_an_app_transaction_is_idempotent(spark, tmp_path):
    frame = spark.range(100).select(F.col("id").alias("n"), (F.col("id") % 4).alias("bucket"))
    for _ in range(2):
        (frame.write.format("spate-delta").mode("append").option("txnAppId", "nightly").option("txnVersion", "1")
         .option("partitionBy", "bucket").save(str(tmp_path / "t")))
    table = DeltaTable(str(tmp_path / "t"))
    assert sorted(table.to_pyarrow_table().column("n").to_pylist()) == list(range(100))
    assert table.transaction_version("nightly") == 1
    with pytest.raises(Exception, match="mode"):
        frame.write.format("spate-delta").mode("overwrite").save(str(tmp_path / "t"))
