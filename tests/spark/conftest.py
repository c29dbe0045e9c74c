"""The broker of the Spark suites: one ``spate broker start`` process for the whole run.

The SparkSession is the run's one of ``tests/conftest.py``; names unique to a
test come from its ``unique`` fixture.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.broker_process import BrokerProcess, running_broker

# Small internal topics and quick transaction cleanup, so the broker starts fast.
SPARK_BROKER_OVERRIDES = {
    "offsets.topic.num.partitions": "3",
    "transaction.state.log.num.partitions": "3",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
    "group.initial.rebalance.delay.ms": "100",
}


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    process = BrokerProcess(data_dir=tmp_path_factory.mktemp("spark-broker"), overrides=dict(SPARK_BROKER_OVERRIDES))
    with running_broker(process) as running:
        yield running
