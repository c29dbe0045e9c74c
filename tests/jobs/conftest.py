"""A ``spate broker start`` process for the jobs' tests that need one (started on first use)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from tests.support.broker_process import BrokerProcess, running_broker

JOBS_BROKER_OVERRIDES = {
    "offsets.topic.num.partitions": "3",
    "transaction.state.log.num.partitions": "3",
    "group.initial.rebalance.delay.ms": "100",
}


@pytest.fixture(autouse=True)
def _root_logging_restored() -> Iterator[None]:
    """A job's ``main()`` run in-process points the root logger at this test's captured stderr; later tests
    (py4j logs as its connections close) must not write to that closed stream."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.fixture(scope="session")
def jobs_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    process = BrokerProcess(data_dir=tmp_path_factory.mktemp("jobs-broker"), overrides=dict(JOBS_BROKER_OVERRIDES))
    with running_broker(process) as running:
        yield running
