"""A SIGTERM stop of a broker whose hundreds of partitions all took data is prompt and leaves nothing to recover.

Logs close in parallel per log dir; each fsyncs what it took since its last
flush. Afterwards the log dir holds the clean-shutdown marker and a recovery
point at every log's end, and the restarted broker serves every acknowledged
record.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from broker_core.storage.checkpoint import OffsetCheckpointFile
from broker_core.storage.files import TopicPartition as StoredPartition
from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

PARTITIONS = 300
RECORDS_PER_PARTITION = 5
STOP_BOUND_S = 60.0
TOPIC = "many"


def produce_everywhere(bootstrap: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True, "linger.ms": 5})
    failures: list[object] = []
    for n in range(RECORDS_PER_PARTITION):
        for partition in range(PARTITIONS):
            producer.produce(TOPIC, f"{partition}:{n}".encode(), partition=partition,
                             on_delivery=lambda err, msg: err is not None and failures.append(err))
        producer.poll(0)
    assert producer.flush(60) == 0, "records still unacknowledged after 60 s"
    assert failures == []


def consume_everything(bootstrap: str, expected: int, timeout_s: float = 60.0) -> dict[int, list[bytes]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "checker", "enable.auto.commit": False})
    consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(PARTITIONS)])
    seen: dict[int, list[bytes]] = {}
    count, deadline = 0, time.monotonic() + timeout_s
    try:
        while count < expected and time.monotonic() < deadline:
            for message in consumer.consume(500, timeout=1.0):
                if message.error() is None:
                    seen.setdefault(message.partition(), []).append(message.value())
                    count += 1
    finally:
        consumer.close()
    return seen


def test_a_clean_stop_of_hundreds_of_written_partitions_is_prompt_and_restarts_with_every_record(tmp_path: Path):
    broker = BrokerProcess(tmp_path / "broker", overrides={"num.recovery.threads.per.data.dir": "4"}).start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)], operation_timeout=60)[TOPIC].result(90)
        produce_everywhere(broker.bootstrap)

        started = time.monotonic()
        assert broker.stop(timeout=STOP_BOUND_S) == 0
        stop_s = time.monotonic() - started

        log_dir = broker.log_dir
        assert (log_dir / ".kafka_cleanshutdown").exists(), "the stop left no clean-shutdown marker"
        points = OffsetCheckpointFile(log_dir / "recovery-point-offset-checkpoint").read()
        assert {points.get(StoredPartition(TOPIC, p)) for p in range(PARTITIONS)} == {RECORDS_PER_PARTITION}, (
            "some log was not flushed to its end"
        )

        broker.start()
        restart_log = broker.log_path.read_text(errors="replace").split("broker 0 stopped cleanly")[-1]
        assert "re-validating" not in restart_log
        seen = consume_everything(broker.bootstrap, PARTITIONS * RECORDS_PER_PARTITION)
        assert {p: len(values) for p, values in seen.items()} == {p: RECORDS_PER_PARTITION for p in range(PARTITIONS)}
        assert all(values == [f"{p}:{n}".encode() for n in range(RECORDS_PER_PARTITION)] for p, values in seen.items())
        print(f"clean stop of {PARTITIONS} written partitions: {stop_s:.1f} s")
    finally:
        broker.kill()
