"""Brokers for the consumer-group suite: real ``spate broker start`` processes.

The broker runs with ``group.initial.rebalance.delay.ms`` small so groups
form quickly, and ``group.min.session.timeout.ms`` lowered so tests can use
short sessions; everything else is the default configuration.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator

import pytest

from tests.support.broker_process import BrokerProcess

GROUP_BROKER_OVERRIDES = {
    "group.initial.rebalance.delay.ms": "200",
    "group.min.session.timeout.ms": "1000",
    "offsets.topic.num.partitions": "10",
}


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    process = BrokerProcess(data_dir=tmp_path_factory.mktemp("groups"), overrides=dict(GROUP_BROKER_OVERRIDES))
    process.start()
    yield process
    died = process.process is not None and process.process.poll() is not None
    process.stop()
    if died:
        pytest.fail(f"the broker died while the tests ran:\n{process.log_tail()}")


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """Names (topics, groups) unique to the test, readable in broker logs."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name)[:60].strip("-")

    def make(kind: str) -> str:
        return f"{stem}-{kind}-{uuid.uuid4().hex[:6]}"

    return make


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    report = yield
    if report.when == "call" and report.failed and "broker" in item.fixturenames:
        broker = item.funcargs.get("broker")
        if isinstance(broker, BrokerProcess):
            report.sections.append(("broker log", broker.log_tail(80)))
    return report
