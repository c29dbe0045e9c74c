"""Spate brokers configured for group and transaction tests, and helpers those tests share.

Groups form after ``group.initial.rebalance.delay.ms`` (100 ms here instead
of 3 s), sessions may be short, the internal topics are small and the
transaction coordinator looks for timed-out transactions twice a second, so
every test runs in seconds.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator

import pytest

from spate.client import Consumer, ConsumerRecord, TopicPartition
from tests.support.broker_process import BrokerProcess

GROUP_TXN_OVERRIDES = {
    "group.initial.rebalance.delay.ms": "100",
    "group.min.session.timeout.ms": "1000",
    "offsets.topic.num.partitions": "5",
    "transaction.state.log.num.partitions": "5",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "500",
}
TIMEOUT_S = 20.0


def start_broker(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[BrokerProcess]:
    process = BrokerProcess(data_dir=tmp_path_factory.mktemp(name), overrides=dict(GROUP_TXN_OVERRIDES))
    process.start()
    yield process
    died = process.process is not None and process.process.poll() is not None
    process.stop()
    if died:
        pytest.fail(f"the broker died while the tests ran:\n{process.log_tail()}")


def unique_names(request: pytest.FixtureRequest) -> Callable[[str], str]:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name)[:50].strip("-")
    return lambda kind: f"{stem}-{kind}-{uuid.uuid4().hex[:6]}"


def poll_until(
    consumers: list[Consumer], done: Callable[[], bool], *, timeout: float = TIMEOUT_S, poll_ms: int = 50
) -> dict[int, list[ConsumerRecord]]:
    """Poll every consumer in turn (as one thread serving several members would) until ``done()``."""
    got: dict[int, list[ConsumerRecord]] = {i: [] for i in range(len(consumers))}
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"condition not reached in {timeout}s; read {[len(v) for v in got.values()]}")
        for index, consumer in enumerate(consumers):
            got[index].extend(consumer.poll(timeout_ms=poll_ms))
    return got


def read_all(bootstrap: str, topic: str, partitions: int, isolation_level: str, *, settle_s: float = 0.5) -> list[bytes]:
    """Every value a fresh assign-only consumer reads from the start, until nothing new comes for ``settle_s``."""
    with Consumer(bootstrap, auto_offset_reset="earliest", isolation_level=isolation_level) as consumer:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        values: list[bytes] = []
        quiet_since = time.monotonic()
        deadline = quiet_since + TIMEOUT_S
        while time.monotonic() - quiet_since < settle_s and time.monotonic() < deadline:
            records = consumer.poll(timeout_ms=100)
            if records:
                values.extend(r.value for r in records)
                quiet_since = time.monotonic()
        return values
