"""``spate transactions list|describe`` show what the coordinator holds in ``__transaction_state``."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

from tests.scenarios.groups.topics import create_topic
from tests.spate.cli.conftest import assert_one_line_failure, spate

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


def test_list_and_describe_show_an_open_transaction_and_its_partitions(broker, unique):
    topic = unique("t")
    create_topic(broker.bootstrap, topic, 2)
    txn_id = unique("txn")
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": txn_id})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, value=b"x", partition=1)
    producer.flush(30)

    listed = spate("transactions", "list", bootstrap=broker.bootstrap)
    assert listed.returncode == 0, listed
    row = next(line for line in listed.stdout.splitlines() if txn_id in line)
    assert "Ongoing" in row

    described = spate("transactions", "describe", txn_id, bootstrap=broker.bootstrap)
    assert described.returncode == 0, described
    assert "State: Ongoing" in described.stdout
    assert topic in described.stdout

    producer.abort_transaction(30)


def test_describe_of_an_unknown_id_fails_on_one_line(broker, unique):
    result = spate("transactions", "describe", unique("never"), bootstrap=broker.bootstrap)
    assert_one_line_failure(result, 1, "not known")


def test_unreachable_broker_fails_on_one_line():
    result = spate("transactions", "list", "--api-timeout-ms", "2000", bootstrap="127.0.0.1:1")
    assert_one_line_failure(result, 1, "127.0.0.1:1")
