"""What a restart re-reads: after SIGKILL only the segments from the checkpointed recovery point on; after a
clean stop, nothing.

The broker logs ``re-validated N of M segment(s)`` for each log it recovers
(loader.py); a partition of many rolled, flushed and checkpointed segments
must re-validate only the active one after a crash, and none after SIGTERM.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

TOPIC = "segmented"
OVERRIDES = {"log.segment.bytes": "4096", "log.flush.interval.ms": "100",
             "log.flush.offset.checkpoint.interval.ms": "100"}
REVALIDATED = re.compile(r"segmented-0: re-validated (\d+) of (\d+) segment")


def fill(bootstrap: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "batch.num.messages": 1})
    for i in range(200):
        producer.produce(TOPIC, b"x" * 400, partition=0)
        producer.poll(0)
    assert producer.flush(30) == 0


def log_text_since(broker: BrokerProcess, offset: int) -> str:
    return broker.log_path.read_text(errors="replace")[offset:]


def test_sigkill_revalidates_only_from_the_recovery_point_and_a_clean_stop_nothing(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "broker", overrides=OVERRIDES).start()
    try:
        fill(broker.bootstrap)
        segments = len(list((broker.log_dir / f"{TOPIC}-0").glob("*.log")))
        assert segments >= 10
        time.sleep(1.5)  # flushed (log.flush.interval.ms) and checkpointed
        mark = len(broker.log_path.read_text(errors="replace"))
        broker.restart(clean=False)
        crashed = [tuple(map(int, m)) for m in REVALIDATED.findall(log_text_since(broker, mark))]
        assert crashed == [(1, segments)], log_text_since(broker, mark)
        mark = len(broker.log_path.read_text(errors="replace"))
        broker.restart(clean=True)
        assert REVALIDATED.findall(log_text_since(broker, mark)) == []
    finally:
        broker.stop()
