"""One broker under a low open-file limit hosts thousands of partitions and takes writes to all of them.

The broker runs with ``ulimit -n`` of 2,048 (soft and hard, set in the child
before it starts), far below the three descriptors per partition that
keeping every active segment open would take for 3,000 partitions. Segment
files are opened on use within ``log.max.open.files`` (lowered to what the
limit leaves after the connection reserve), so creation and produce succeed
and the broker's descriptor count stays under the limit.
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as ConfluentTopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.broker_process import BrokerProcess

pytestmark = pytest.mark.timeout(600)

FILE_LIMIT = 2048
PARTITIONS = 3000
TOPIC = "wide"


class LimitedBroker(BrokerProcess):
    """A broker process whose open-file limit is ``FILE_LIMIT``, soft and hard."""

    def start(self, timeout: float = 60.0) -> BrokerProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.data_dir / "broker.log"
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (FILE_LIMIT, FILE_LIMIT)),
            )
        self.wait_ready(timeout)
        return self


def broker_fds(broker: BrokerProcess) -> int:
    return len(os.listdir(f"/proc/{broker.process.pid}/fd"))


def produce_to_every_partition(bootstrap: str, per_partition: int) -> int:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "1", "linger.ms": 5})
    acked = [0]

    def delivered(err: object, _msg: object) -> None:
        if err is None:
            acked[0] += 1

    for round_ in range(per_partition):
        for partition in range(PARTITIONS):
            value = f"{partition}:{round_}".encode()
            while True:
                try:
                    producer.produce(TOPIC, value, partition=partition, on_delivery=delivered)
                    break
                except BufferError:
                    producer.poll(0.01)
        producer.poll(0)
    assert producer.flush(180) == 0
    return acked[0]


def read_partition(bootstrap: str, partition: int, count: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "scale-check", "enable.auto.commit": False})
    consumer.assign([ConfluentTopicPartition(TOPIC, partition, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(values) < count and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            values.append(message.value())
    consumer.close()
    return values


def test_thousands_of_partitions_fit_a_low_open_file_limit_and_take_writes(tmp_path: Path) -> None:
    broker = LimitedBroker(tmp_path / "broker", overrides={"max.broker.partitions": str(PARTITIONS + 10)})
    broker.start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)], request_timeout=300)[TOPIC].result(300)
        assert produce_to_every_partition(broker.bootstrap, 2) == 2 * PARTITIONS
        fds = broker_fds(broker)
        # log.max.open.files is lowered to 2048 - 512 for segment files; the rest are sockets and such.
        assert fds < FILE_LIMIT - 256, fds
        for partition in (0, PARTITIONS // 2, PARTITIONS - 1):
            assert read_partition(broker.bootstrap, partition, 2) == [f"{partition}:0".encode(), f"{partition}:1".encode()]
        broker.check_alive()
    finally:
        broker.stop(timeout=120)
