"""The at-least-once sink does not fail a task because the machine or the broker is slow.

Under load a task's last batch can be acknowledged, and its delivery
callbacks still running on the producer's sender thread, when the task
flushes; the flush used to return before they ran, and the task failed with
"record(s) have no acknowledgement" (Spark: "Aborting commit for partition
N"). A broker that stops answering for a while (here: SIGSTOP) makes
produce requests time out and be retried; the task must wait it out.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from spark_ext.client_pool import ClientPool
from spark_ext.sink_options import parse_sink_options
from spark_ext.sink_records import OutgoingRecord
from spark_ext.sink_task import DeliveryTracker, TaskInfo, TaskWriter
from tests.spark.conftest import SPARK_BROKER_OVERRIDES
from tests.spark.kafka_data import create_topic
from tests.spark.sink.kafka_io import read_all
from tests.support.broker_process import BrokerProcess, running_broker


def at_least_once(bootstrap: str, topic: str, **settings: str):
    return parse_sink_options(
        {"bootstrap.servers": bootstrap, "topic": topic, "deliveryGuarantee": "at_least_once", **settings},
        streaming=True,
    )


def values(topic: str, count: int, then=None) -> Iterator[OutgoingRecord]:
    for i in range(count):
        yield OutgoingRecord(topic, None, b"v%06d" % i, None, ())
    if then is not None:
        then()


def test_a_task_whose_last_acknowledgements_are_still_being_counted_waits_for_them(broker, unique, monkeypatch):
    topic = unique("out")
    create_topic(broker.bootstrap, topic, 1)
    counted = DeliveryTracker.__call__

    def busy_sender_thread(self, metadata, error) -> None:
        time.sleep(0.002)
        counted(self, metadata, error)

    monkeypatch.setattr(DeliveryTracker, "__call__", busy_sender_thread)
    options = at_least_once(broker.bootstrap, topic, **{"kafka.linger.ms": "0"})
    pool = ClientPool(reaper=False)
    try:
        for task in range(3):
            # Spark is slow to end the partition: the last records are sent and acknowledged before the flush.
            records = values(topic, 60, then=lambda: time.sleep(0.05))
            assert TaskWriter(options, pool=pool).write_at_least_once(records, TaskInfo(task)).rows == 60
    finally:
        pool.close()


@pytest.fixture
def own_broker(tmp_path) -> Iterator[BrokerProcess]:
    with running_broker(BrokerProcess(data_dir=tmp_path / "broker", overrides=dict(SPARK_BROKER_OVERRIDES))) as b:
        yield b


@pytest.mark.timeout(180)
def test_a_task_rides_out_a_broker_that_stops_answering_for_longer_than_the_request_timeout(own_broker, unique):
    topic = unique("out")
    create_topic(own_broker.bootstrap, topic, 2)
    pid = own_broker.process.pid
    resumed = threading.Event()

    def pause_for_three_seconds() -> None:
        os.kill(pid, signal.SIGSTOP)
        timer = threading.Timer(3.0, lambda: (os.kill(pid, signal.SIGCONT), resumed.set()))
        timer.daemon = True
        timer.start()

    records = []
    for i in range(4000):
        records.append(OutgoingRecord(topic, None, b"v%06d" % i, i % 2, ()))
    options = at_least_once(own_broker.bootstrap, topic, **{"kafka.request.timeout.ms": "1000",
                                                           "kafka.linger.ms": "5"})

    def paced() -> Iterator[OutgoingRecord]:
        for i, record in enumerate(records):
            if i == 1000:
                pause_for_three_seconds()
            if i % 200 == 0:
                time.sleep(0.02)
            yield record

    pool = ClientPool(reaper=False)
    try:
        message = TaskWriter(options, pool=pool).write_at_least_once(paced(), TaskInfo(3))
    finally:
        if not resumed.wait(10):
            os.kill(pid, signal.SIGCONT)
        pool.close()
    assert message.rows == 4000
    written = read_all(own_broker.bootstrap, {topic: 2}, isolation="read_uncommitted", expect=4000, quiet_s=1.0)
    assert sorted({r.value for r in written}) == sorted(r.value for r in records)
    assert len(written) == 4000  # the idempotent producer's retries wrote nothing twice
