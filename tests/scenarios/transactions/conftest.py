"""Brokers for the transaction suite: real ``spate broker start`` processes.

Transactions time out after seconds rather than minutes, the coordinator
looks for them twice a second, and the internal topics are small, so the
suite starts quickly; everything else is the default configuration.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.broker_process import BrokerProcess

TXN_BROKER_OVERRIDES = {
    "transaction.state.log.num.partitions": "5",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
    "offsets.topic.num.partitions": "5",
    "group.initial.rebalance.delay.ms": "100",
}


def _check_stopped(process: BrokerProcess) -> None:
    died = process.process is not None and process.process.poll() is not None
    process.stop()
    if died:
        pytest.fail(f"the broker died while the tests ran:\n{process.log_tail()}")


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    process = BrokerProcess(data_dir=tmp_path_factory.mktemp("txn"), overrides=dict(TXN_BROKER_OVERRIDES))
    process.start()
    yield process
    _check_stopped(process)


@pytest.fixture
def own_broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    """A broker of one test, which it may kill and restart."""
    process = BrokerProcess(data_dir=tmp_path / "broker", overrides=dict(TXN_BROKER_OVERRIDES))
    process.start()
    yield process
    process.kill()


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """Names (topics, transactional ids, groups) unique to the test, readable in broker logs."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name)[:60].strip("-")

    def make(kind: str) -> str:
        return f"{stem}-{kind}-{uuid.uuid4().hex[:6]}"

    return make
