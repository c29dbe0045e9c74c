# %% [markdown]
# # A Spate topic as a Spark DataFrame
#
# Notebook-style walk-through (cells separated by `# %%`, as Jupyter, VS Code
# and Jupytext read them). Run it whole against a broker with
#
#     python examples/topic_as_dataframe.py --bootstrap 127.0.0.1:9092 --topic page-views
#
# or paste the cells into a notebook. `pip install` of this project is all the
# setup Spark needs: it discovers the `spate` data source by itself.

# %%
from __future__ import annotations

import argparse
import sys

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_ext.session import spate_session


def session() -> SparkSession:
    return spate_session("topic-as-dataframe")  # workers run this interpreter; quiet logs


# %% [markdown]
# Read the whole topic: one row per record, with Spark's Kafka-source schema
# (`key`, `value`, `topic`, `partition`, `offset`, `timestamp`, `timestampType`).

# %%
def read_topic(spark: SparkSession, bootstrap: str, topic: str) -> DataFrame:
    return (
        spark.read.format("spate")
        .option("bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("isolation.level", "read_committed")
        .load()
    )


# %% [markdown]
# Values are bytes; parse JSON events and summarise them like any DataFrame.

# %%
def views_per_page(events: DataFrame) -> DataFrame:
    schema = "user STRING, page STRING, ts LONG"
    parsed = events.select(F.from_json(F.col("value").cast("string"), schema).alias("e"), "partition", "offset")
    return parsed.groupBy("e.page").agg(F.count("*").alias("views")).orderBy(F.desc("views"))


# %% [markdown]
# How the records spread over partitions, and the offset range each holds.

# %%
def partition_summary(events: DataFrame) -> DataFrame:
    return events.groupBy("partition").agg(
        F.count("*").alias("records"), F.min("offset").alias("first_offset"), F.max("offset").alias("last_offset")
    ).orderBy("partition")


# %%
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Show a Spate topic of JSON page views as DataFrames.")
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--topic", default="page-views")
    args = parser.parse_args(argv)
    spark = session()
    events = read_topic(spark, args.bootstrap, args.topic)
    events.printSchema()
    partition_summary(events).show()
    views_per_page(events).show()
    return 0


if __name__ == "__main__":
    sys.exit(main())
