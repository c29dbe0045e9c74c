"""Broker throughput with confluent-kafka, next to the loopback ceiling.

Run: .venv/bin/python -m pytest tests/perf/test_broker_perf.py -m perf -s
Scale with SPATE_PERF_RECORDS (default 500,000 records of 1 KB).
"""

from __future__ import annotations

import os
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.perf.loopback import loopback_bandwidth_mb_s
from tests.support.broker_process import BrokerProcess, running_broker

pytestmark = pytest.mark.perf

RECORD_SIZE = 1024
PARTITIONS = 3


def produce(bootstrap: str, topic: str, records: int, *, record_size: int = RECORD_SIZE, acks: str = "1") -> float:
    """Seconds for confluent-kafka to deliver ``records`` records of ``record_size`` bytes."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": acks,
            "linger.ms": 5,
            "batch.size": 1_000_000,
            "queue.buffering.max.kbytes": 1_048_576,
            "compression.type": "none",
        }
    )
    payload = os.urandom(record_size)
    start = time.perf_counter()
    for i in range(records):
        while True:
            try:
                producer.produce(topic, payload)
                break
            except BufferError:
                producer.poll(0.001)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(120) != 0:
        raise RuntimeError("producer did not deliver everything")
    return time.perf_counter() - start


def consume(bootstrap: str, topic: str, records: int) -> float:
    """Seconds for confluent-kafka to read ``records`` records from offset 0 of every partition."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "perf",
            "enable.auto.commit": False,
            "fetch.max.bytes": 52_428_800,
            "max.partition.fetch.bytes": 10_485_760,
            # librdkafka pauses fetching for this long (1 s by default) whenever its local queue is over
            # its limits, which a fast broker fills in a few ms: the rate would measure that pause.
            "fetch.queue.backoff.ms": 10,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    seen = 0
    start = time.perf_counter()
    deadline = start + 120
    while seen < records and time.perf_counter() < deadline:
        for message in consumer.consume(10_000, 1.0):
            if message.error() is None:
                seen += 1
    elapsed = time.perf_counter() - start
    consumer.close()
    if seen < records:
        raise RuntimeError(f"consumed only {seen} of {records}")
    return elapsed


def test_confluent_kafka_throughput_against_the_loopback_ceiling(tmp_path_factory):
    records = int(os.environ.get("SPATE_PERF_RECORDS", "500000"))
    data_dir = tmp_path_factory.mktemp("perf-broker", numbered=True)
    with running_broker(BrokerProcess(data_dir, overrides={"log.segment.bytes": str(512 * 1024 * 1024)})) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic("perf", PARTITIONS, 1)])["perf"].result(30)
        megabytes = records * RECORD_SIZE / 1e6
        produce_s = produce(broker.bootstrap, "perf", records)
        consume_s = consume(broker.bootstrap, "perf", records)
    ceiling = loopback_bandwidth_mb_s()
    produce_mb_s = megabytes / produce_s
    consume_mb_s = megabytes / consume_s
    print()
    print(f"{'workload':<40}{'MB/s':>10}{'records/s':>14}{'of loopback':>14}")
    print(f"{'loopback TCP (one stream)':<40}{ceiling:>10.1f}{'':>14}{'100%':>14}")
    for name, mb_s, secs in (("produce 1 KB, acks=1 (confluent-kafka)", produce_mb_s, produce_s),
                             ("consume 1 KB (confluent-kafka)", consume_mb_s, consume_s)):
        print(f"{name:<40}{mb_s:>10.1f}{records / secs:>14,.0f}{mb_s / ceiling:>14.1%}")
