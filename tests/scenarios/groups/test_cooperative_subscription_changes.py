"""Cooperative-sticky consumers changing their subscriptions: every rebalance completes as soon as all known
members have rejoined, never on a timer.

The consumers are confluent-kafka (librdkafka) consumers polled by the test
itself, as librdkafka's own 0113 test drives them. Their session timeout is
45 s and their rebalance timeout (max.poll.interval.ms) 300 s, so a join phase
that waited for either would blow the few seconds each change is given.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka import Consumer

from tests.scenarios.groups.topics import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

PARTITIONS = 8
# A change settles in two rebalances (revoke, then assign) plus a heartbeat interval or two.
PROMPT_S = 12.0
POLL_S = 0.05


def _consumer(bootstrap: str, group: str, name: str, **extra: object) -> Consumer:
    return Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "client.id": name,
        "partition.assignment.strategy": "cooperative-sticky", "auto.offset.reset": "earliest",
        "enable.auto.commit": False, "heartbeat.interval.ms": 500, **extra,
    })


def _settle(consumers: list[Consumer], subscriptions: list[set[str]], topics: list[str], limit_s: float) -> float:
    """Poll every consumer until each topic's partitions are owned once each, by its subscribers only; the seconds
    it took."""
    started = time.monotonic()
    while time.monotonic() - started < limit_s:
        for consumer in consumers:
            consumer.poll(POLL_S)
        if _assignments_match(consumers, subscriptions, topics):
            return time.monotonic() - started
    owned = [sorted((tp.topic[-1], tp.partition) for tp in c.assignment()) for c in consumers]
    raise AssertionError(f"not settled after {limit_s}s: subscriptions {subscriptions}, assignments {owned}")


def _assignments_match(consumers: list[Consumer], subscriptions: list[set[str]], topics: list[str]) -> bool:
    for topic in topics:
        subscribers = {i for i, s in enumerate(subscriptions) if topic in s}
        owned = [(i, tp.partition) for i, c in enumerate(consumers) for tp in c.assignment() if tp.topic == topic]
        if not {i for i, _ in owned} <= subscribers:
            return False
        if subscribers and sorted(p for _, p in owned) != list(range(PARTITIONS)):
            return False
    return True


@pytest.fixture
def two_topics(broker) -> list[str]:
    prefix = f"coop-{uuid.uuid4().hex[:8]}"
    names = [f"{prefix}-{suffix}" for suffix in ("a", "b")]
    for name in names:
        create_topic(broker.bootstrap, name, PARTITIONS)
    return names


@pytest.fixture
def group_of(broker) -> Iterator[Callable[..., list[Consumer]]]:
    made: list[Consumer] = []

    def make(count: int, **extra: object) -> list[Consumer]:
        group = f"coop-{uuid.uuid4().hex[:8]}"
        made.extend(_consumer(broker.bootstrap, group, f"C_{i}", **extra) for i in range(count))
        return made

    yield make
    for consumer in made:
        consumer.close()


def test_each_subscription_change_settles_without_waiting_for_a_timeout(two_topics, group_of) -> None:
    a, b = two_topics
    consumers = group_of(4)
    subscriptions: list[set[str]] = [set() for _ in consumers]
    # Subscriptions grow here: a librdkafka consumer that drops a topic revokes its partitions locally and,
    # in the versions tested, does not rejoin until its next metadata refresh (a client matter).
    playbook = [(0, {a}), (1, {a}), (2, {b}), (3, {a, b}), (1, {a, b}), (0, {a, b}), (2, {a, b})]
    for index, topics in playbook:
        consumers[index].subscribe(sorted(topics))
        subscriptions[index] = topics
        took = _settle(consumers, subscriptions, two_topics, PROMPT_S)
        assert took < PROMPT_S, f"consumer {index} subscribing to {sorted(topics)} took {took:.1f}s"


def test_a_member_that_unsubscribes_leaves_at_once_and_the_rest_take_over(two_topics, group_of) -> None:
    a, _ = two_topics
    consumers = group_of(3)
    for consumer in consumers:
        consumer.subscribe([a])
    subscriptions = [{a}, {a}, {a}]
    _settle(consumers, subscriptions, [a], PROMPT_S)
    consumers[1].unsubscribe()
    subscriptions[1] = set()
    took = _settle(consumers, subscriptions, [a], PROMPT_S)
    assert took < PROMPT_S


def test_a_member_id_the_client_abandoned_holds_the_join_only_for_its_session_timeout(two_topics, group_of) -> None:
    # Subscribing three times in a row makes librdkafka discard the answer to its first JoinGroup (the
    # member id Kafka's KIP-394 hands out first) and ask again; as in Kafka, the unused id keeps the join
    # phase open until its session expires -- here 6 s, not the rebalance timeout.
    a, _ = two_topics
    consumers = group_of(3, **{"session.timeout.ms": 6000})
    consumers[0].subscribe([a])
    _settle(consumers, [{a}, set(), set()], [a], PROMPT_S)
    for _ in range(3):
        consumers[1].subscribe([a])
    consumers[2].subscribe([a])
    took = _settle(consumers, [{a}, {a}, {a}], [a], 6 + PROMPT_S)
    assert took < 6 + PROMPT_S
