"""Brokers of the transaction suite: real ``spate broker start`` processes.

Transactions time out after seconds rather than minutes, the coordinator
looks for them twice a second, and the internal topics are small, so the
suite starts quickly; everything else is the default configuration.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.broker_process import BrokerProcess, running_broker
from tests.support.broker_under_test import SPATE, BrokerFactory

TXN_BROKER_OVERRIDES = {
    "transaction.state.log.num.partitions": "5",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
    "offsets.topic.num.partitions": "5",
    "group.initial.rebalance.delay.ms": "100",
}


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    process = BrokerProcess(data_dir=tmp_path_factory.mktemp("txn"), overrides=dict(TXN_BROKER_OVERRIDES))
    with running_broker(process) as running:
        yield running


@pytest.fixture
def own_broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    """A broker of one test, which it may kill and restart."""
    with BrokerFactory(SPATE, tmp_path) as start:
        yield start(TXN_BROKER_OVERRIDES)
