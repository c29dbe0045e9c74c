"""Real brokers for the client's integration tests: Spate, and Tansu as an independent oracle.

Every test that takes ``broker`` runs twice, once per broker kind, each kind
with one broker per test module. A test that the oracle cannot run says why
with ``broker.skip_on_tansu(reason)``; the reasons are Tansu's known gaps.
Tests that kill or restart a broker take ``spate_broker``, a fresh Spate
broker of their own.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from spate.client import Admin, Consumer, ConsumerRecord, NewTopic, TopicPartition
from tests.support.broker_process import BrokerProcess
from tests.support.broker_under_test import (
    SPATE,
    TANSU,
    TANSU_DELETE_RECORDS_UNIMPLEMENTED,
    TANSU_LIST_OFFSETS_BY_TIME_BUG,
    new_broker,
    stop_and_check,
)
from tests.support.tansu_process import TansuUnavailableError

# Tansu's gaps that some client tests run into.
TANSU_IDEMPOTENCE_BUG = "InitProducerId v0-2 answers UNKNOWN_SERVER_ERROR, so an idempotent producer cannot start"
TANSU_LIST_OFFSETS_LATEST_BUG = "ListOffsets LATEST answers the last batch's base offset + 1, not the log end offset"
TANSU_NO_CREATE_PARTITIONS = "CreatePartitions is not served"
TANSU_NO_ALTER_CONFIGS = "AlterConfigs is not served (only IncrementalAlterConfigs)"
TANSU_TOPIC_CONFIGS_IGNORED = "topic configs are stored but neither validated nor applied"

__all__ = ["TANSU_DELETE_RECORDS_UNIMPLEMENTED", "TANSU_LIST_OFFSETS_BY_TIME_BUG"]

CLIENT_TIMEOUT_MS = 20_000


@dataclass
class BrokerUnderTest:
    kind: str
    process: BrokerProcess

    @property
    def bootstrap(self) -> str:
        return self.process.bootstrap

    @property
    def is_tansu(self) -> bool:
        return self.kind == TANSU

    def skip_on_tansu(self, reason: str) -> None:
        if self.is_tansu:
            pytest.skip(f"Tansu: {reason}")

    def producer_settings(self, **overrides: Any) -> dict[str, Any]:
        """Producer options for this broker; the default idempotent producer cannot start on Tansu."""
        settings: dict[str, Any] = {"linger_ms": 2, "delivery_timeout_ms": 60_000}
        if self.is_tansu:
            settings["enable_idempotence"] = False
        settings.update(overrides)
        return settings


@pytest.fixture(scope="module", params=[SPATE, TANSU])
def broker(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerUnderTest]:
    kind = request.param
    process = new_broker(kind, tmp_path_factory.mktemp(f"{kind}-broker"), {})
    try:
        process.start()
    except TansuUnavailableError as exc:
        pytest.skip(str(exc))
    yield BrokerUnderTest(kind, process)
    stop_and_check(process)


@pytest.fixture
def spate_broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    """A Spate broker of this test's own, for tests that kill or restart it."""
    process = BrokerProcess(data_dir=tmp_path / "spate").start()
    yield process
    process.kill()


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> Callable[..., str]:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name)[:60].strip("-")

    def make(suffix: str = "") -> str:
        return f"{stem}{'-' + suffix if suffix else ''}-{uuid.uuid4().hex[:8]}"

    return make


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
