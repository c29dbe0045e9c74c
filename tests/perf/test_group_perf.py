"""Consumer-group benchmarks: commit throughput and the time for 10 members to join.

Run: .venv/bin/python -m pytest tests/perf/test_group_perf.py -m perf -s
"""

from __future__ import annotations

import threading
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.broker_process import BrokerProcess, running_broker

pytestmark = pytest.mark.perf

COMMITS = 5_000
MEMBERS = 10
PARTITIONS = 20


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    process = BrokerProcess(tmp_path_factory.mktemp("group-perf"), overrides={"group.initial.rebalance.delay.ms": "0"})
    with running_broker(process) as running:
        admin = AdminClient({"bootstrap.servers": running.bootstrap})
        for name, partitions in (("commits", 1), ("members", PARTITIONS)):
            admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
        yield running


def test_commit_throughput_of_one_consumer_committing_after_every_poll(broker):
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
    for i in range(COMMITS):
        producer.produce("commits", value=b"%d" % i)
    producer.flush(30)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "committer",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition("commits", 0, 0)])
    commits = 0
    start = time.perf_counter()
    while commits < COMMITS:
        message = consumer.poll(5)
        if message is None or message.error():
            continue
        consumer.commit(message=message, asynchronous=False)
        commits += 1
    elapsed = time.perf_counter() - start
    consumer.close()
    print(f"\nsynchronous commits after every poll: {commits / elapsed:,.0f} commits/s "
          f"({elapsed / commits * 1000:.2f} ms each, {commits:,} commits)")


def test_time_for_ten_members_to_join_and_get_assignments(broker):
    assigned = threading.Barrier(MEMBERS + 1)
    consumers = [
        Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "joiners", "session.timeout.ms": 10_000})
        for _ in range(MEMBERS)
    ]
    owned: dict[int, list[TopicPartition]] = {}
    stop = threading.Event()

    def member(index: int, consumer: Consumer) -> None:
        def on_assign(c, partitions):
            owned[index] = partitions

        def on_revoke(c, partitions):
            owned.pop(index, None)

        consumer.subscribe(["members"], on_assign=on_assign, on_revoke=on_revoke)
        waited = False
        while not stop.is_set():
            consumer.poll(0.05)
            if not waited and sum(len(p) for p in owned.values()) == PARTITIONS and len(owned) == MEMBERS:
                waited = True
                assigned.wait()
        consumer.close()

    start = time.perf_counter()
    threads = [threading.Thread(target=member, args=(i, c)) for i, c in enumerate(consumers)]
    for thread in threads:
        thread.start()
    assigned.wait(timeout=120)
    elapsed = time.perf_counter() - start
    sizes = sorted(len(p) for p in owned.values())
    stop.set()
    for thread in threads:
        thread.join(30)
    assert sizes == [2] * MEMBERS
    print(f"\n{MEMBERS} members joining one group on {PARTITIONS} partitions: every member assigned "
          f"{elapsed:.2f} s after the first subscribe")
