"""The broker of the consumer-group suite: a real ``spate broker start`` process per module.

The broker runs with ``group.initial.rebalance.delay.ms`` small so groups
form quickly, and ``group.min.session.timeout.ms`` lowered so tests can use
short sessions; everything else is the default configuration.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.broker_process import BrokerProcess, running_broker

GROUP_BROKER_OVERRIDES = {
    "group.initial.rebalance.delay.ms": "200",
    "group.min.session.timeout.ms": "1000",
    "offsets.topic.num.partitions": "10",
}


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    process = BrokerProcess(data_dir=tmp_path_factory.mktemp("groups"), overrides=dict(GROUP_BROKER_OVERRIDES))
    with running_broker(process) as running:
        yield running
