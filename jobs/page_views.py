"""Page views per page and minute: a Structured Streaming query from one Spate topic to another.

Runnable on its own with ``spark-submit`` against any Spate (or Kafka)
cluster, and used by the quickstart on the embedded broker::

    spark-submit jobs/page_views.py --bootstrap 127.0.0.1:9092 \\
        --events page-views --counts page-views-per-minute --checkpoint /tmp/page-views-ckpt

Events are JSON ``{"user", "page", "ts"}``; each output record is keyed
``<window start>|<page>`` with a JSON value ``{"window_start", "page",
"views"}``. The query runs in complete mode, so each micro-batch writes every
count again and a key's latest record holds its current value; the sink
writes each micro-batch in Kafka transactions (exactly once), so a
read_committed reader never sees a batch half-written.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import LongType, StringType, StructField, StructType

EVENT_SCHEMA = StructType([
    StructField("user", StringType()),
    StructField("page", StringType()),
    StructField("ts", LongType()),
])


def page_view_counts(events: DataFrame) -> DataFrame:
    """Per-minute views of each page, as ``key``/``value`` string columns for the Spate sink."""
    parsed = events.select(F.from_json(F.col("value").cast("string"), EVENT_SCHEMA).alias("event")).select("event.*")
    windowed = (
        parsed.withColumn("event_time", F.timestamp_millis("ts"))
        .groupBy(F.window("event_time", "1 minute").alias("window"), "page")
        .count()
    )
    window_start = F.unix_millis(F.col("window.start"))
    return windowed.select(
        F.concat_ws("|", window_start.cast("string"), F.col("page")).alias("key"),
        F.to_json(F.struct(window_start.alias("window_start"), "page", F.col("count").alias("views"))).alias("value"),
    )


def start_query(
    spark: SparkSession,
    *,
    bootstrap: str,
    events_topic: str,
    counts_topic: str,
    checkpoint: str,
    available_now: bool = False,
    max_offsets_per_trigger: int | None = None,
) -> StreamingQuery:
    reader = (
        spark.readStream.format("spate")
        .option("bootstrap.servers", bootstrap)
        .option("subscribe", events_topic)
        .option("startingOffsets", "earliest")
    )
    if max_offsets_per_trigger is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(max_offsets_per_trigger))
    writer = (
        page_view_counts(reader.load())
        .writeStream.format("spate")
        .outputMode("complete")
        .option("bootstrap.servers", bootstrap)
        .option("topic", counts_topic)
        .option("checkpointLocation", checkpoint)
        .option("deliveryGuarantee", "exactly_once")
    )
    writer = writer.trigger(availableNow=True) if available_now else writer.trigger(processingTime="1 second")
    return writer.start()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="spark-submit jobs/page_views.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--events", default="page-views", help="topic of page-view events")
    parser.add_argument("--counts", default="page-views-per-minute", help="topic the counts go to")
    parser.add_argument("--checkpoint", required=True, help="the query's checkpoint directory")
    parser.add_argument("--available-now", action="store_true", help="process what is there, then stop")
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName("spate-page-views").getOrCreate()
    query = start_query(spark, bootstrap=args.bootstrap, events_topic=args.events, counts_topic=args.counts,
                        checkpoint=args.checkpoint, available_now=args.available_now)
    query.awaitTermination()
    return 0


if __name__ == "__main__":
    sys.exit(main())
