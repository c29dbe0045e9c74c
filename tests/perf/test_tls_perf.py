"""Produce and fetch throughput over TLS next to PLAINTEXT, on one broker with both listeners.

Run: .venv/bin/python -m pytest tests/perf/test_tls_perf.py -m perf -s
Scale with SPATE_PERF_RECORDS (default 200,000 records of 1 KB). PLAINTEXT
fetches go out with ``sendfile``; TLS fetches read each file range with one
``pread`` and encrypt it, so the ratio is the cost of TLS on this machine.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from spate.cli.certs import create_certificates
from tests.support.broker_process import BrokerProcess, running_broker
from tests.support.ports import free_port

pytestmark = pytest.mark.perf

RECORD_SIZE = 1024
PARTITIONS = 3


def produce(settings: dict[str, Any], topic: str, records: int) -> float:
    producer = Producer({**settings, "acks": "1", "linger.ms": 5, "batch.size": 1_000_000,
                         "queue.buffering.max.kbytes": 1_048_576, "compression.type": "none"})
    payload = os.urandom(RECORD_SIZE)
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
    if producer.flush(180) != 0:
        raise RuntimeError("producer did not deliver everything")
    return time.perf_counter() - start


def consume(settings: dict[str, Any], topic: str, records: int) -> float:
    consumer = Consumer({**settings, "group.id": f"perf-{topic}", "enable.auto.commit": False,
                         "fetch.max.bytes": 52_428_800, "max.partition.fetch.bytes": 10_485_760})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    seen, start = 0, time.perf_counter()
    deadline = start + 180
    while seen < records and time.perf_counter() < deadline:
        seen += sum(1 for message in consumer.consume(10_000, 1.0) if message.error() is None)
    elapsed = time.perf_counter() - start
    consumer.close()
    if seen < records:
        raise RuntimeError(f"consumed only {seen} of {records}")
    return elapsed


def test_tls_throughput_next_to_plaintext(tmp_path_factory: pytest.TempPathFactory) -> None:
    records = int(os.environ.get("SPATE_PERF_RECORDS", "200000"))
    base = tmp_path_factory.mktemp("tls-perf")
    certs = create_certificates(base / "certs")
    broker = BrokerProcess(base / "broker")
    tls_port = free_port()
    broker.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{broker.port},SSL://127.0.0.1:{tls_port}",
        "ssl.keystore.location": str(certs.broker_keystore),
        "log.segment.bytes": str(512 * 1024 * 1024),
    })
    runs = {
        "PLAINTEXT": {"bootstrap.servers": broker.bootstrap},
        "SSL": {"bootstrap.servers": f"127.0.0.1:{tls_port}", "security.protocol": "SSL",
                "ssl.ca.location": str(certs.ca)},
    }
    results: dict[str, tuple[float, float]] = {}
    with running_broker(broker):
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for name in runs:
            admin.create_topics([NewTopic(f"perf-{name}", PARTITIONS, 1)])[f"perf-{name}"].result(30)
        for name, settings in runs.items():
            results[name] = (produce(settings, f"perf-{name}", records), consume(settings, f"perf-{name}", records))
    megabytes = records * RECORD_SIZE / 1e6
    print()
    print(f"{'listener':<12}{'produce MB/s':>14}{'consume MB/s':>14}")
    for name, (produce_s, consume_s) in results.items():
        print(f"{name:<12}{megabytes / produce_s:>14.1f}{megabytes / consume_s:>14.1f}")
    plain, tls = results["PLAINTEXT"], results["SSL"]
    print(f"{'SSL/PLAIN':<12}{plain[0] / tls[0]:>14.0%}{plain[1] / tls[1]:>14.0%}")
