"""An idempotent producer keeps every record exactly once, in order, across broker crashes and restarts.

A stream of numbered records is produced and, once a quarter of them are
acknowledged, the broker is killed (SIGKILL) or stopped, then started again
on the same port and data. Batches in flight at that moment are retried with
their original sequence numbers; the broker must append the ones it never
got and recognise the ones it did.
Spate only: Tansu keeps nothing across a restart.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from spate.client import Producer, RecordMetadata
from tests.spate.client.conftest import assigned_consumer, consume, create_topic

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

RECORDS = 20_000
PARTITIONS = 2


def produce_through_outage(broker, topic: str, *, crash: bool) -> list[RecordMetadata]:
    """Send RECORDS numbered records; take the broker down once a quarter of them are acknowledged."""
    acknowledged = threading.Semaphore(0)
    failures: list[BaseException] = []

    def outage() -> None:
        try:
            for _ in range(RECORDS // 4):
                acknowledged.acquire()
            if crash:
                broker.kill()
            else:
                broker.stop(timeout=10)
            time.sleep(0.2)
            broker.start()
        except BaseException as exc:
            failures.append(exc)
            raise

    with Producer(
        broker.bootstrap,
        batch_size=2048,
        linger_ms=2,
        request_timeout_ms=3000,
        delivery_timeout_ms=60_000,
        retry_backoff_ms=50,
        retry_backoff_max_ms=300,
    ) as producer:
        assert producer.idempotent
        thread = threading.Thread(target=outage)
        thread.start()
        futures = [
            producer.send(
                topic, str(i).encode().rjust(100, b"0"), key=str(i % 10).encode(),
                on_delivery=lambda metadata, error: acknowledged.release(),
            )
            for i in range(RECORDS)
        ]
        thread.join(30)
        assert not failures, f"the outage went wrong: {failures[0]!r}"
        producer.flush(60)
    return [f.result() for f in futures]


@pytest.mark.parametrize("crash", [True, False], ids=["sigkill", "clean-restart"])
def test_no_record_is_lost_or_duplicated_across_a_broker_restart(spate_broker, topic_name, crash: bool) -> None:
    topic = create_topic(spate_broker.bootstrap, topic_name(), PARTITIONS)
    placed = produce_through_outage(spate_broker, topic, crash=crash)

    with assigned_consumer(spate_broker.bootstrap, topic, PARTITIONS) as consumer:
        got = consume(consumer, RECORDS, timeout=30)
        assert consumer.poll(timeout_ms=300) == [], "nothing beyond the records sent"
    values = [int(r.value) for r in got]
    duplicated = [v for v, n in Counter(values).items() if n > 1]
    assert duplicated == [], f"{len(duplicated)} records were written twice"
    assert sorted(values) == list(range(RECORDS))
    for partition in range(PARTITIONS):
        in_partition = [int(r.value) for r in got if r.partition == partition]
        assert in_partition == sorted(in_partition), "retries kept send order within the partition"
    acknowledged = {(m.partition, m.offset) for m in placed}
    assert acknowledged == {(r.partition, r.offset) for r in got}
