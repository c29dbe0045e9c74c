"""Compacting a topic written by transactions: committed records compact like any other, aborted ones
leave the log, and a read_committed consumer reads the same before and after."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import Producer

from tests.scenarios.compaction.changelog import (
    create_compacted_topic,
    entries_on_disk,
    partition_dir,
    read_all,
    wait_until,
)
from tests.scenarios.compaction.test_changelog_compaction import active_base, cleaner_checkpoint
from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def latest(entries) -> dict:  # type: ignore[no-untyped-def]
    found = {}
    for _, key, value in entries:
        found[key] = value
    return found


def test_aborted_records_leave_and_read_committed_reads_the_same(tmp_path: Path) -> None:
    broker = BrokerProcess(
        tmp_path / "broker",
        overrides={"log.cleaner.backoff.ms": "200", "transaction.state.log.replication.factor": "1",
                   "transaction.state.log.min.isr": "1"},
    ).start()
    try:
        topic = "txn-changelog"
        # Cleaning waits until the transactions are written, then catches up at once.
        create_compacted_topic(broker.bootstrap, topic, **{"segment.bytes": "16384", "min.compaction.lag.ms": "0"})
        producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "compaction-txn",
                             "linger.ms": 5})
        producer.init_transactions(30)
        for round_ in range(30):
            producer.begin_transaction()
            for k in range(20):
                value = f"{'abort' if round_ % 3 == 2 else 'ok'}-{round_}-{k}".encode() + b"." * 60
                producer.produce(topic, key=f"key-{k % 10 if round_ % 3 != 2 else 100 + k}".encode(), value=value,
                                 partition=0)
            if round_ % 3 == 2:
                producer.abort_transaction(30)
            else:
                producer.commit_transaction(30)
        committed_before = read_all(broker.bootstrap, topic, isolation="read_committed")
        directory = partition_dir(broker.log_dir, topic)
        # More transactions roll the segment holding the last ones into the cleanable range.
        for round_ in range(5):
            producer.begin_transaction()
            for k in range(40):
                producer.produce(topic, key=f"tail-{k}".encode(), value=b"t" * 100, partition=0)
            producer.commit_transaction(30)
        wait_until(lambda: cleaner_checkpoint(broker.log_dir, topic) >= active_base(directory), 60,
                   "the cleaner to reach the active segment")

        committed_after = read_all(broker.bootstrap, topic, isolation="read_committed")
        tail = [e for e in committed_after if e[1].startswith(b"tail-")]
        assert latest([e for e in committed_after if e not in tail]) == latest(committed_before)
        assert all(value.startswith(b"ok-") for _, key, value in committed_after if not key.startswith(b"tail-"))
        on_disk = entries_on_disk(directory)
        assert not [e for e in on_disk if e[2] is not None and e[2].startswith(b"abort-")], "aborted data remains"
        assert len([e for e in on_disk if e[1].startswith(b"key-")]) == 10  # one committed record per key
        uncommitted = read_all(broker.bootstrap, topic)
        assert latest(uncommitted) == latest(committed_after)
    finally:
        broker.stop()
