"""The Spark planner's compaction throughput next to the broker's own planner, on the same broker and data.

    .venv/bin/python -m tests.perf.spark_compaction_bench [--dirty-mb 64] [--rounds 3] [--master local[2]]

One broker; per round two compacted topics of ``--dirty-mb`` MB of dirty
segments each (1 KB records over 20,000 keys, 8 MB segments), written while
both are left to the ``spark`` planner. Then:

- broker planner: the first topic is handed to the broker's cleaner
  (``spate.compaction.planner=broker``); timed until its cleaner checkpoint
  moves (planning and rewriting in the broker's cleaner thread);
- Spark planner: ``jobs/compaction.py``'s ``compact`` on the second topic,
  in process with a ``--master`` SparkSession; timed end to end (describe,
  the Spark read and aggregation, streaming the plan to the leader, the
  leader applying it).

MB/s is the dirty bytes the leader reported before cleaning over the time.
A small compaction warms Spark up first.
Prints a Markdown table of the medians of ``--rounds`` rounds and the ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic

from jobs.compaction import CompactionConfig, compact
from spate.client.admin.clean_plans import CleanPlanClient
from spate.structs import TopicPartition
from tests.perf.compaction_bench import checkpoint_of, fill_dirty_topic
from tests.support.broker_process import BrokerProcess

REPO = Path(__file__).resolve().parents[2]
TOPIC_CONFIGS = {"cleanup.policy": "compact", "spate.compaction.planner": "spark",
                 "min.cleanable.dirty.ratio": "0.01", "segment.bytes": str(8 << 20)}


def spark_session(master: str):
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
    return (SparkSession.builder.master(master).appName("spate-compaction-bench")
            .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2").getOrCreate())


def dirty_bytes(bootstrap: str, topic: str) -> int:
    tp = TopicPartition(topic, 0)
    with CleanPlanClient(bootstrap) as plans:
        return plans.describe([tp])[tp].dirty_bytes


def broker_planner(broker: BrokerProcess, admin: AdminClient, topic: str) -> float:
    dirty = dirty_bytes(broker.bootstrap, topic)
    change = [ConfigEntry("spate.compaction.planner", "broker", incremental_operation=AlterConfigOpType.SET)]
    resource = ConfigResource("topic", topic, incremental_configs=change)
    started = time.perf_counter()
    admin.incremental_alter_configs([resource])[resource].result(30)
    deadline = time.monotonic() + 900
    while checkpoint_of(broker.log_dir, topic) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    return dirty / 1e6 / (time.perf_counter() - started)


def spark_planner(spark, bootstrap: str, topic: str) -> float:
    dirty = dirty_bytes(bootstrap, topic)
    started = time.perf_counter()
    [report] = compact(spark, CompactionConfig(bootstrap, (topic,)))
    if report.outcome != "compacted":
        raise RuntimeError(f"the Spark planner did not compact {topic}: {report.outcome}")
    return dirty / 1e6 / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dirty-mb", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    spark = spark_session(args.master)
    spark.sparkContext.setLogLevel("WARN")
    figures: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="spark-compaction-bench-", dir=Path(__file__).resolve().parent) as tmp:
        broker = BrokerProcess(Path(tmp), overrides={"log.cleaner.backoff.ms": "200"}).start()
        try:
            admin = AdminClient({"bootstrap.servers": broker.bootstrap})
            # Warm-up: the first Spark job of a session starts the JVM's compiler and the Python workers.
            admin.create_topics([NewTopic("warm-up", 1, 1, config=TOPIC_CONFIGS)])["warm-up"].result(30)
            fill_dirty_topic(broker.bootstrap, "warm-up", 10)
            compact(spark, CompactionConfig(broker.bootstrap, ("warm-up",)))
            for r in range(args.rounds):
                topics = (f"by-broker-{r}", f"by-spark-{r}")
                for topic in topics:
                    admin.create_topics([NewTopic(topic, 1, 1, config=TOPIC_CONFIGS)])[topic].result(30)
                    fill_dirty_topic(broker.bootstrap, topic, args.dirty_mb)
                time.sleep(3)  # let the broker flush what was just written
                figures.append((broker_planner(broker, admin, topics[0]),
                                spark_planner(spark, broker.bootstrap, topics[1])))
        finally:
            broker.stop()
    in_broker = statistics.median(f[0] for f in figures)
    by_spark = statistics.median(f[1] for f in figures)
    print("| planner | MB/s of dirty log cleaned |\n|---|---|")
    print(f"| broker's cleaner (plans in its thread) | {in_broker:.1f} |")
    print(f"| Spark job ({args.master}, end to end) | {by_spark:.1f} |")
    print(f"| Spark / broker (median of the rounds) | {statistics.median(f[1] / f[0] for f in figures):.2f} |")


if __name__ == "__main__":
    main()
