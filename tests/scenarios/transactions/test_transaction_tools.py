"""``spate transactions describe-producers`` and ``find-hanging`` (KIP-664's tools), against a real broker."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

from tests.scenarios.groups.topics import create_topic
from tests.spate.cli.conftest import assert_one_line_failure, spate

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


@pytest.fixture
def open_transaction(broker, unique):
    """A two-partition topic: one committed record on partition 0, then a transaction left open on partition 1."""
    topic, txn_id = unique("t"), unique("txn")
    create_topic(broker.bootstrap, topic, 2)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": txn_id})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, value=b"committed", partition=0)
    producer.commit_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, value=b"open", partition=1)
    assert producer.flush(30) == 0
    yield topic
    producer.abort_transaction(30)


def _rows(stdout: str) -> list[list[str]]:
    """The cells of a table's data rows (rich draws the header row with ┃, data rows with │)."""
    return [[cell.strip() for cell in line.strip().strip("│").split("│")] for line in stdout.splitlines()
            if line.strip().startswith("│")]


def test_describe_producers_shows_where_the_open_transaction_starts(broker, open_transaction) -> None:
    open_partition = spate("transactions", "describe-producers", "--topic", open_transaction, "--partition", "1",
                           bootstrap=broker.bootstrap)
    assert open_partition.returncode == 0, open_partition
    (row,) = _rows(open_partition.stdout)
    assert row[-1] == "0"  # the open transaction's first record is the partition's offset 0
    committed = spate("transactions", "describe-producers", "--topic", open_transaction, "--partition", "0",
                      bootstrap=broker.bootstrap)
    assert committed.returncode == 0, committed
    (row,) = _rows(committed.stdout)
    assert row[-1] == "None"


def test_an_open_transaction_its_coordinator_knows_is_not_hanging(broker, open_transaction) -> None:
    result = spate("transactions", "find-hanging", "--topic", open_transaction, bootstrap=broker.bootstrap)
    assert result.returncode == 0, result
    assert "No hanging transactions." in result.stdout


def test_a_transaction_open_longer_than_the_maximum_timeout_is_hanging(broker, open_transaction) -> None:
    result = spate("transactions", "find-hanging", "--topic", open_transaction, "--max-transaction-timeout", "0",
                   bootstrap=broker.bootstrap)
    assert result.returncode == 0, result
    assert [(row[0], row[1], row[5]) for row in _rows(result.stdout)] == [(open_transaction, "1", "0")]


def test_describe_producers_of_an_unknown_topic_fails_on_one_line(broker, unique) -> None:
    result = spate("transactions", "describe-producers", "--topic", unique("none"), "--partition", "0",
                   "--api-timeout-ms", "3000", bootstrap=broker.bootstrap)
    assert_one_line_failure(result, 1, "does not exist")
