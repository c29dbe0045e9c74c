"""What the Spark benchmarks share: loading a topic fast, and a local[2] session like the test suite's."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from confluent_kafka import Producer

REPO = Path(__file__).resolve().parents[2]


def produce_bulk(bootstrap: str, topic: str, records: int, value_size: int, partitions: int | None = None) -> None:
    """``records`` values of ``value_size`` bytes keyed ``%08d``; round-robin over ``partitions`` if given."""
    producer = Producer({
        "bootstrap.servers": bootstrap,
        "linger.ms": 20,
        "batch.size": 1_000_000,
        "queue.buffering.max.messages": 500_000,
    })
    value = b"v" * value_size
    placement: dict[str, int] = {}
    for i in range(records):
        if partitions:
            placement["partition"] = i % partitions
        while True:
            try:
                producer.produce(topic, value=value, key=b"%08d" % i, **placement)
                break
            except BufferError:  # the local queue is full: let deliveries drain it
                producer.poll(0.05)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("records left undelivered")


def spark_session(app_name: str, **settings: str):
    """A ``local[2]`` session without the UI that imports this checkout on its Python workers."""
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={REPO / 'conf' / 'log4j2.properties'}")
    )
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
