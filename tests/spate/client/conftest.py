"""Real brokers for the client's integration tests: Spate, and Tansu as an independent oracle.

Every test that takes ``broker`` (a ``BrokerUnderTest``) runs twice, once per
broker kind, each kind with one broker per test module; the Tansu runs skip
where Tansu is not installed. A test that the oracle cannot run says why with
``broker.skip_on_tansu(reason)``; the reasons are Tansu's known gaps, listed
in ``tests.support.broker_under_test``. Tests that kill or restart a broker
take ``spate_broker``, a fresh Spate broker of their own.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from spate.client import Admin, Consumer, ConsumerRecord, NewTopic, TopicPartition
from tests.support.broker_process import BrokerProcess, running_broker
from tests.support.broker_under_test import (
    SPATE,
    TANSU,
    TANSU_DELETE_RECORDS_UNIMPLEMENTED,
    TANSU_IDEMPOTENCE_BUG,
    TANSU_LIST_OFFSETS_BY_TIME_BUG,
    TANSU_LIST_OFFSETS_LATEST_BUG,
    TANSU_NO_ALTER_CONFIGS,
    TANSU_NO_CREATE_PARTITIONS,
    TANSU_TOPIC_CONFIGS_IGNORED,
    BrokerFactory,
    BrokerUnderTest,
    new_broker,
    skip_unless_installed,
)

# The client tests import Tansu's gaps from here, beside the fixtures.
__all__ = [
    "TANSU_DELETE_RECORDS_UNIMPLEMENTED",
    "TANSU_IDEMPOTENCE_BUG",
    "TANSU_LIST_OFFSETS_BY_TIME_BUG",
    "TANSU_LIST_OFFSETS_LATEST_BUG",
    "TANSU_NO_ALTER_CONFIGS",
    "TANSU_NO_CREATE_PARTITIONS",
    "TANSU_TOPIC_CONFIGS_IGNORED",
]

CLIENT_TIMEOUT_MS = 20_000


@pytest.fixture(scope="module", params=[SPATE, TANSU])
def broker(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerUnderTest]:
    kind = request.param
    skip_unless_installed(kind)
    with running_broker(new_broker(kind, tmp_path_factory.mktemp(f"{kind}-broker"))) as process:
        yield BrokerUnderTest(kind, process)


@pytest.fixture
def spate_broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    """A Spate broker of this test's own, for tests that kill or restart it."""
    with BrokerFactory(SPATE, tmp_path) as start:
        yield start()


def create_topic(bootstrap: str, name: str, partitions: int = 1, configs: dict[str, str] | None = None) -> str:
    with Admin(bootstrap, default_api_timeout_ms=CLIENT_TIMEOUT_MS) as admin:
        admin.create_topics([NewTopic(name, partitions, 1, configs or {})])
        # Wait until every partition has a leader, so the first produce finds it.
        deadline = time.monotonic() + CLIENT_TIMEOUT_MS / 1000
        while True:
            description = admin.describe_topics([name])[name]
            if len(description.partitions) == partitions and all(p.leader >= 0 for p in description.partitions):
                return name
            if time.monotonic() > deadline:
                raise TimeoutError(f"topic {name} has no leaders yet: {description}")
            time.sleep(0.05)


def consume(
    consumer: Consumer, expected: int, *, timeout: float = CLIENT_TIMEOUT_MS / 1000
) -> list[ConsumerRecord]:
    """Poll until ``expected`` records arrived (failing after ``timeout`` seconds)."""
    records: list[ConsumerRecord] = []
    deadline = time.monotonic() + timeout
    while len(records) < expected:
        if time.monotonic() > deadline:
            raise TimeoutError(f"read {len(records)} of {expected} records in {timeout}s")
        records.extend(consumer.poll(timeout_ms=200))
    return records


def assigned_consumer(bootstrap: str, topic: str, partitions: int, **settings: Any) -> Consumer:
    consumer = Consumer(bootstrap, auto_offset_reset="earliest", default_api_timeout_ms=CLIENT_TIMEOUT_MS, **settings)
    consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
    return consumer
