"""Copy one topic to another through Spark Structured Streaming, exactly once.

::

    spark-submit jobs/copy_topic.py --bootstrap 127.0.0.1:9092 \\
        --source orders --sink orders-copy --checkpoint /tmp/orders-copy-ckpt \\
        [--delivery exactly_once|at_least_once] [--max-offsets-per-trigger N] [--available-now]
        [--transaction-timeout-ms MS]

Each record's key is kept and its value becomes ``<value>|<source partition>|<source offset>``,
so every output record says which input it came from. Stop the query any
way you like (even ``kill -9``) and start it again with the same
checkpoint: with ``exactly_once`` a read_committed consumer of the sink
topic sees each input's output once; with ``at_least_once`` possibly more
than once, but never not at all.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

from spark_ext import SpateDataSource


def transform(records: DataFrame) -> DataFrame:
    """The spate source's rows as ``key``/``value`` columns for the spate sink."""
    return records.select(
        F.col("key"),
        F.concat_ws(
            "|", F.col("value").cast("string"), F.col("partition").cast("string"), F.col("offset").cast("string")
        ).alias("value"),
    )


def start_query(
    spark: SparkSession,
    *,
    bootstrap: str,
    source: str,
    sink: str,
    checkpoint: str,
    delivery: str = "exactly_once",
    max_offsets_per_trigger: int | None = None,
    trigger_ms: int = 500,
    available_now: bool = False,
    transaction_timeout_ms: int | None = None,
) -> StreamingQuery:
    reader = (
        spark.readStream.format("spate")
        .option("bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
    )
    if max_offsets_per_trigger is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(max_offsets_per_trigger))
    writer = (
        transform(reader.load())
        .writeStream.format("spate")
        .option("bootstrap.servers", bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", checkpoint)
        .option("deliveryGuarantee", delivery)
    )
    if transaction_timeout_ms is not None:
        writer = writer.option("transaction.timeout.ms", str(transaction_timeout_ms))
    if available_now:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=f"{trigger_ms} milliseconds")
    return writer.start()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="spark-submit jobs/copy_topic.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--source", required=True, help="topic to read")
    parser.add_argument("--sink", required=True, help="topic to write")
    parser.add_argument("--checkpoint", required=True, help="the query's checkpoint directory")
    parser.add_argument("--delivery", choices=("exactly_once", "at_least_once"), default="exactly_once")
    parser.add_argument("--max-offsets-per-trigger", type=int, default=None)
    parser.add_argument("--trigger-ms", type=int, default=500)
    parser.add_argument("--available-now", action="store_true", help="process what is there, then stop")
    parser.add_argument("--transaction-timeout-ms", type=int, default=None,
                        help="longer than the longest micro-batch plus the time to restart the query")
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName("spate-copy-topic").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    # Also found without this where the pyspark_spate module is installed; registering makes sure.
    spark.dataSource.register(SpateDataSource)
    query = start_query(
        spark,
        bootstrap=args.bootstrap,
        source=args.source,
        sink=args.sink,
        checkpoint=args.checkpoint,
        delivery=args.delivery,
        max_offsets_per_trigger=args.max_offsets_per_trigger,
        trigger_ms=args.trigger_ms,
        available_now=args.available_now,
        transaction_timeout_ms=args.transaction_timeout_ms,
    )
    query.awaitTermination()
    return 0


if __name__ == "__main__":
    sys.exit(main())
