"""Acknowledged records survive a broker restart, clean (SIGTERM) or crash (SIGKILL).

The broker is restarted on the same port and data directory. Every record
acknowledged with acks=all must still be there at its acknowledged offset, and
new records continue the offsets. An idempotent producer that keeps sending
across the restart (librdkafka retries in-flight batches with their original
sequence numbers) must end with each record stored exactly once, in order.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaError

from tests.scenarios.compat.clients import ConfluentDriver, OutgoingRecord, Placement
from tests.scenarios.compat.sample_records import (
    check_read_back,
    end_offsets,
    keyed_records,
)
from tests.support.broker_process import BrokerProcess
from tests.support.broker_under_test import BrokerFactory, require_spate

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

PARTITIONS = 3


@pytest.fixture
def restartable_broker(broker_kind: str, broker_factory: BrokerFactory) -> BrokerProcess:
    require_spate(broker_kind, "it keeps everything in memory, so there is nothing to survive a restart")
    return broker_factory({})


@pytest.mark.parametrize("how", ["sigterm", "sigkill"])
def test_acknowledged_records_survive_restart_in_order(restartable_broker: BrokerProcess, topic_name, how: str) -> None:
    client = ConfluentDriver(restartable_broker.bootstrap)
    topic = topic_name()
    client.create_topic(topic, PARTITIONS)
    sent = keyed_records(3000, seed=5, tag="before")
    placements = []
    for codec, start in (("none", 0), ("lz4", 1000), ("zstd", 2000)):
        placements += client.produce(topic, sent[start : start + 1000], codec=codec)

    restartable_broker.restart(clean=how == "sigterm")

    consumed = client.consume(topic, {p: 0 for p in range(PARTITIONS)}, end_offsets(placements))
    check_read_back(sent, placements, consumed)


@pytest.mark.parametrize("how", ["sigterm", "sigkill"])
def test_offsets_continue_after_restart_without_reuse(restartable_broker: BrokerProcess, topic_name, how: str) -> None:
    client = ConfluentDriver(restartable_broker.bootstrap)
    topic = topic_name()
    client.create_topic(topic, 1)
    before = client.produce(topic, keyed_records(100, seed=6, tag="before"), partition=0)

    restartable_broker.restart(clean=how == "sigterm")
    after = client.produce(topic, keyed_records(100, seed=7, tag="after"), partition=0)

    assert [p.offset for p in before + after] == list(range(200))


@pytest.mark.parametrize("how", ["sigterm", "sigkill"])
def test_idempotent_producer_running_across_restart_stores_each_record_once(
    restartable_broker: BrokerProcess, topic_name, how: str
) -> None:
    client = ConfluentDriver(restartable_broker.bootstrap)
    topic = topic_name()
    client.create_topic(topic, PARTITIONS)
    sent = keyed_records(6000, seed=8, tag=how)
    producer = client.producer(
        "none",
        **{"message.timeout.ms": 60_000, "reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 500, "linger.ms": 5},
    )
    placements: list[Placement | None] = [None] * len(sent)
    failures: list[tuple[int, KafkaError]] = []

    def send(start: int, stop: int) -> None:
        for index in range(start, stop):
            record: OutgoingRecord = sent[index]

            def report(err, msg, index=index) -> None:
                if err is not None:
                    failures.append((index, err))
                else:
                    placements[index] = Placement(msg.partition(), msg.offset())

            producer.produce(
                topic, key=record.key, value=record.value, headers=list(record.headers),
                timestamp=record.timestamp_ms, on_delivery=report,
            )  # fmt: skip
            producer.poll(0)

    send(0, 2000)
    producer.flush(20)
    # Leave batches queued and in flight while the broker goes down.
    send(2000, 4000)
    # No wait here: a quick broker acknowledges 2,000 records within a few milliseconds.
    producer.poll(0)
    outstanding_at_shutdown = len(producer)
    if how == "sigterm":
        restartable_broker.stop()
    else:
        restartable_broker.kill()
    time.sleep(0.5)
    send(4000, len(sent))
    restartable_broker.start()
    remaining = producer.flush(60)

    print(f"{outstanding_at_shutdown} records queued or in flight when the broker went down")
    assert outstanding_at_shutdown > 0, "the restart happened with nothing in flight; the test proved nothing"
    assert remaining == 0, f"{remaining} records never delivered"
    assert not failures, f"{len(failures)} deliveries failed, first: {failures[:3]}"
    acknowledged = [p for p in placements if p is not None]
    assert len(acknowledged) == len(sent), "a record got neither an acknowledgement nor an error"
    consumed = client.consume(topic, {p: 0 for p in range(PARTITIONS)}, end_offsets(acknowledged))
    check_read_back(sent, acknowledged, consumed)
