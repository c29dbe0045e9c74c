# %% [markdown]
# # A topic into Delta Lake, queried with Spark SQL
#
# Notebook-style walk-through (cells separated by `# %%`, as Jupyter, VS Code
# and Jupytext read them; `examples/notebooks/delta/` holds it as an executed
# notebook). It streams a topic of JSON page views into a Delta table with the
# exactly-once `spate-delta` sink, reads the table back with `deltalake`,
# queries it with Spark SQL and plots the records per minute. Run it whole with
#
#     python examples/delta_ingest.py --bootstrap 127.0.0.1:9092 --topic page-views --table /tmp/page_views
#
# (`--produce 20000` first writes that many page views into the topic).

# %%
from __future__ import annotations

import argparse
import json
import random
import sys
import time

from deltalake import DeltaTable
from pyspark.sql import DataFrame, SparkSession

from spark_ext.session import spate_session

VIEW_SCHEMA = "user STRING, page STRING"


def session() -> SparkSession:
    return spate_session("delta-ingest")  # finds the spate and spate-delta data sources by itself


# %% [markdown]
# Some page views to ingest: JSON values keyed by user, with record timestamps
# over the last half hour and a busier stretch in the middle.

# %%
def produce_page_views(bootstrap: str, topic: str, count: int, *, partitions: int = 3, seed: int = 7) -> None:
    from spate.client import Admin, NewTopic, Producer

    rng, now_ms = random.Random(seed), int(time.time() * 1000)
    with Admin(bootstrap) as admin:
        if topic not in admin.list_topics():
            admin.create_topics([NewTopic(topic, num_partitions=partitions)])
    with Producer(bootstrap, linger_ms=5) as producer:
        for i in range(count):
            user = f"user-{rng.randrange(500)}"
            event = {"user": user, "page": rng.choice(["/", "/pricing", "/docs", "/blog", "/signup"])}
            producer.send(topic, json.dumps(event), key=user, timestamp=now_ms - 1_800_000 + int(_moment(i / count) * 1_800_000))
        producer.flush()


def _moment(share: float) -> float:
    """When (0..1 of the half hour) the record ``share`` of the way through is stamped: the middle third rushes."""
    if share < 1 / 3:
        return share * 1.5  # a third of the records over half the time
    if share < 2 / 3:
        return 0.5 + (share - 1 / 3) * 0.3  # a third in a tenth of the time
    return 0.6 + (share - 2 / 3) * 1.2


# %% [markdown]
# Stream the topic into the table: every micro-batch is one Delta commit
# carrying the query's id and batch id, so a query killed anywhere and restarted
# from its checkpoint writes each record once. `availableNow` ingests what the
# topic holds and stops (`spate jobs run ingest` is the same as a ready job).

# %%
def ingest(spark: SparkSession, bootstrap: str, topic: str, table: str) -> None:
    from pyspark.sql import functions as F

    records = (spark.readStream.format("spate")
               .option("kafka.bootstrap.servers", bootstrap)
               .option("subscribe", topic)
               .option("startingOffsets", "earliest")
               .load())
    decoded = records.select("partition", "offset", "timestamp", F.col("key").cast("string").alias("key"),
                             F.from_json(F.col("value").cast("string"), VIEW_SCHEMA).alias("v"))
    query = (decoded.select("partition", "offset", "timestamp", "key", "v.*")
             .writeStream.format("spate-delta")
             .option("checkpointLocation", f"{table}/_checkpoint")
             .trigger(availableNow=True)
             .start(table))
    query.awaitTermination()


# %% [markdown]
# The table is a plain Delta table: `deltalake` (or DuckDB, Polars,
# delta-spark) reads it without Spate.

# %%
def table_summary(table: str) -> dict:
    delta = DeltaTable(table)
    return {"version": delta.version(), "records": delta.to_pyarrow_table().num_rows,
            "files": len(delta.file_uris()), "commits": len(delta.history())}


# %% [markdown]
# Spark SQL over the table's current version: its files as the Delta log lists
# them (where the delta-spark jars are installed, `spark.read.format("delta")`
# reads it the same).

# %%
def register_view(spark: SparkSession, table: str, name: str = "page_views") -> DataFrame:
    frame = spark.read.parquet(*DeltaTable(table).file_uris())
    frame.createOrReplaceTempView(name)
    return frame


PER_MINUTE_SQL = """
SELECT date_trunc('minute', timestamp) AS minute, count(*) AS records, count(DISTINCT user) AS users
FROM page_views GROUP BY 1 ORDER BY 1
"""

TOP_PAGES_SQL = "SELECT page, count(*) AS views FROM page_views GROUP BY page ORDER BY views DESC"


# %% [markdown]
# Throughput per minute (by record timestamp), as a bar chart.

# %%
def plot_per_minute(per_minute, path: str | None = None):
    import matplotlib

    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 3.5))
    ax.bar(per_minute["minute"], per_minute["records"], width=1 / 24 / 60 * 0.9)
    ax.set_xlabel("minute (record timestamp, UTC)")
    ax.set_ylabel("records")
    ax.set_title("records per minute")
    fig.autofmt_xdate()
    if path is not None:
        fig.savefig(path, dpi=90, bbox_inches="tight")
    return fig


# %%
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Ingest a topic into Delta, query it with Spark SQL, plot it.")
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--topic", default="page-views")
    parser.add_argument("--table", default="/tmp/spate-page-views")
    parser.add_argument("--produce", type=int, default=0, help="first produce this many page views")
    parser.add_argument("--plot", help="save the per-minute chart to this PNG file")
    args = parser.parse_args(argv)
    if args.produce:
        produce_page_views(args.bootstrap, args.topic, args.produce)
    spark = session()
    ingest(spark, args.bootstrap, args.topic, args.table)
    print(f"table {args.table}: {table_summary(args.table)}")
    register_view(spark, args.table)
    spark.sql(TOP_PAGES_SQL).show()
    per_minute = spark.sql(PER_MINUTE_SQL).toPandas()
    print(f"{int(per_minute['records'].sum())} records over {len(per_minute)} minutes")
    if args.plot:
        plot_per_minute(per_minute, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
