"""Spate's consumer and a real broker's fetch sessions (KIP-227), read off the broker's metrics.

A consumer of many partitions opens one incremental session and reads every
record exactly once; seeks, pauses and resumes change the session without
ending it; a broker restart in the middle of a read costs one full fetch on
the new connection and neither loses nor repeats a record. Closing the consumer
closes its session on the broker at once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from spate.client import Consumer, Producer, TopicPartition
from tests.spate.client.conftest import CLIENT_TIMEOUT_MS, create_topic
from tests.support.broker_process import BrokerProcess, free_port, running_broker
from tests.support.metrics_scrape import scrape

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

CACHE = "kafka_server_fetchsessioncache_"
KINDS = ("full", "incremental", "sessionless", "session_error")


class MeteredBroker:
    def __init__(self, data_dir: Path) -> None:
        self.metrics_port = free_port()
        overrides = {"metrics.http.listener": f"http://127.0.0.1:{self.metrics_port}"}
        self.process = BrokerProcess(data_dir, overrides=overrides)

    @property
    def bootstrap(self) -> str:
        return self.process.bootstrap

    def requests(self) -> dict[str, float]:
        """Fetch requests served since the broker started, by how their session served them."""
        sample = scrape(self.metrics_url)
        return {kind: sample.sum(CACHE + "fetchrequests_total", kind=kind) for kind in KINDS}

    def sessions(self) -> float:
        return scrape(self.metrics_url).value(CACHE + "numincrementalfetchsessions")

    def partitions_in_sessions(self) -> float:
        return scrape(self.metrics_url).value(CACHE + "numincrementalfetchpartitionscached")

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"


@pytest.fixture(scope="module")
def metered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MeteredBroker]:
    broker = MeteredBroker(tmp_path_factory.mktemp("sessions"))
    with running_broker(broker.process):
        yield broker


@pytest.fixture
def restartable(tmp_path: Path) -> Iterator[MeteredBroker]:
    broker = MeteredBroker(tmp_path)
    broker.process.start()
    try:
        yield broker
    finally:
        broker.process.kill()


def fill(bootstrap: str, topic: str, partitions: int, per_partition: int, start: int = 0) -> None:
    with Producer(bootstrap, linger_ms=5) as producer:
        for i in range(start, start + per_partition):
            for p in range(partitions):
                producer.send(topic, f"{p}-{i}".encode(), partition=p)
        producer.flush(30)


def consumer_of(bootstrap: str, topic: str, partitions: int, **settings) -> Consumer:
    consumer = Consumer(bootstrap, auto_offset_reset="earliest", fetch_max_wait_ms=100,
                        default_api_timeout_ms=CLIENT_TIMEOUT_MS, **settings)
    consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
    return consumer


def read(consumer: Consumer, count: int, timeout: float = 60.0, max_records: int = 500) -> list[tuple[int, int, bytes]]:
    """Poll until ``count`` records arrived: (partition, offset, value) of each, in arrival order."""
    out: list[tuple[int, int, bytes]] = []
    deadline = time.monotonic() + timeout
    while len(out) < count:
        assert time.monotonic() < deadline, f"read {len(out)} of {count} records in {timeout}s"
        out += [(r.partition, r.offset, r.value) for r in consumer.poll(timeout_ms=200, max_records=max_records)]
    return out


def expected(partitions: int, per_partition: int, start: int = 0) -> set[tuple[int, int, bytes]]:
    return {(p, i, f"{p}-{i}".encode()) for p in range(partitions) for i in range(start, start + per_partition)}


def test_a_consumer_of_many_partitions_reads_everything_through_one_incremental_session(metered) -> None:
    topic, partitions, per_partition = "sessions-many", 300, 4
    create_topic(metered.bootstrap, topic, partitions)
    fill(metered.bootstrap, topic, partitions, per_partition)
    before = metered.requests()
    with consumer_of(metered.bootstrap, topic, partitions) as consumer:
        records = read(consumer, partitions * per_partition)
        # Caught up: each further round is an incremental fetch that names nothing and carries nothing.
        for _ in range(5):
            assert consumer.poll(timeout_ms=150) == []
        after = metered.requests()
        cached = metered.partitions_in_sessions()
    assert len(records) == len(set(records)) and set(records) == expected(partitions, per_partition)
    assert after["full"] - before["full"] == 1
    assert after["incremental"] - before["incremental"] >= 5
    assert (after["sessionless"], after["session_error"]) == (before["sessionless"], before["session_error"])
    assert cached >= partitions


def test_seek_pause_and_resume_change_the_session_without_ending_it(metered) -> None:
    topic, partitions = "sessions-seek-pause", 6
    create_topic(metered.bootstrap, topic, partitions)
    fill(metered.bootstrap, topic, partitions, 5)
    before = metered.requests()
    with consumer_of(metered.bootstrap, topic, partitions) as consumer:
        assert set(read(consumer, partitions * 5)) == expected(partitions, 5)
        consumer.seek(TopicPartition(topic, 0), 3)
        assert sorted(read(consumer, 2)) == [(0, 3, b"0-3"), (0, 4, b"0-4")]
        consumer.pause(TopicPartition(topic, 1))
        fill(metered.bootstrap, topic, partitions, 1, start=5)
        unpaused = read(consumer, partitions - 1)
        assert sorted(unpaused) == sorted(expected(partitions, 1, start=5) - {(1, 5, b"1-5")})
        assert consumer.poll(timeout_ms=300) == []
        consumer.resume(TopicPartition(topic, 1))
        assert read(consumer, 1) == [(1, 5, b"1-5")]
    after = metered.requests()
    assert after["full"] - before["full"] == 1
    assert after["session_error"] == before["session_error"]


def test_a_broker_restart_mid_read_loses_and_repeats_nothing(restartable) -> None:
    topic, partitions, per_partition = "sessions-restart", 20, 50
    create_topic(restartable.bootstrap, topic, partitions)
    fill(restartable.bootstrap, topic, partitions, per_partition)
    with consumer_of(restartable.bootstrap, topic, partitions) as consumer:
        records = read(consumer, partitions * per_partition // 2, max_records=100)
        restartable.process.restart()
        fill(restartable.bootstrap, topic, partitions, per_partition, start=per_partition)
        records += read(consumer, partitions * 2 * per_partition - len(records))
        for _ in range(3):
            assert consumer.poll(timeout_ms=150) == []
        after_restart = restartable.requests()
    assert len(records) == len(set(records))
    assert set(records) == expected(partitions, 2 * per_partition)
    # The restarted broker: the consumer's first fetch on the new connection opened a new session (it did not
    # try the old one), the rest were incremental.
    assert after_restart["full"] == 1 and after_restart["session_error"] == 0 and after_restart["incremental"] >= 3


def test_closing_the_consumer_removes_its_session_from_the_broker_at_once(metered) -> None:
    topic, partitions = "sessions-close", 8
    create_topic(metered.bootstrap, topic, partitions)
    fill(metered.bootstrap, topic, partitions, 2)
    sessions_before, partitions_before = metered.sessions(), metered.partitions_in_sessions()
    consumer = consumer_of(metered.bootstrap, topic, partitions)
    assert set(read(consumer, partitions * 2)) == expected(partitions, 2)
    assert consumer.poll(timeout_ms=150) == []
    assert metered.sessions() == sessions_before + 1
    before_close = metered.requests()
    started = time.monotonic()
    consumer.close()
    assert time.monotonic() - started < 5
    # No eviction involved: min.incremental.fetch.session.eviction.ms (120 s by default) is far off.
    assert metered.sessions() == sessions_before
    assert metered.partitions_in_sessions() == partitions_before
    # The closing fetch is answered without a session.
    assert metered.requests()["sessionless"] == before_close["sessionless"] + 1
