"""Fixtures shared across suites: the one SparkSession of a test run, and the broker the Spark suites use.

Spark's Python workers are separate processes started with PYSPARK_PYTHON;
they must run this interpreter (it has pyarrow and the project). They find
``pyspark_spate`` and ``spark_ext`` through PYTHONPATH, pointed at the
repository before the session starts (an installed package needs nothing of
the kind).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.broker_process import BrokerProcess

REPO = Path(__file__).resolve().parents[1]

# Small internal topics and quick transaction cleanup, so the broker starts fast.
SPARK_BROKER_OVERRIDES = {
    "offsets.topic.num.partitions": "3",
    "transaction.state.log.num.partitions": "3",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
    "group.initial.rebalance.delay.ms": "100",
}


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    paths = [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    session = (
        SparkSession.builder.master("local[2]")
        .appName("spate-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={REPO / 'conf' / 'log4j2.properties'}")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    process = BrokerProcess(data_dir=tmp_path_factory.mktemp("spark-broker"), overrides=dict(SPARK_BROKER_OVERRIDES))
    process.start()
    yield process
    died = process.process is not None and process.process.poll() is not None
    process.stop()
    if died:
        pytest.fail(f"the broker died while the Spark tests ran:\n{process.log_tail()}")
