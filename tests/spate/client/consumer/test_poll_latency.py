"""A poll hands out records as soon as they are in.

End-to-end latency depends on it; the test checks the mechanism, not a
timing: which network waits a ``poll`` makes when a fetch response is
already waiting in the socket.
"""

from __future__ import annotations

import select

import pytest

from spate.client import Consumer, Producer, TopicPartition
from tests.spate.client.conftest import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def test_poll_returns_a_response_already_received_without_blocking_on_the_network(broker, topic_name) -> None:
    topic = create_topic(broker.bootstrap, topic_name())
    tp = TopicPartition(topic, 0)
    with Consumer(broker.bootstrap, fetch_max_wait_ms=10_000) as consumer, \
            Producer(broker.bootstrap, **broker.producer_settings(linger_ms=0)) as producer:
        consumer.assign([tp])
        consumer.seek_to_end(tp)
        consumer.position(tp)
        assert consumer.poll(timeout_ms=0) == []  # a fetch now waits at the broker
        producer.send(topic, b"wake").result(10)
        connections = list(consumer._network._connections.values())
        readable, _, _ = select.select([c.fileno() for c in connections], [], [], 10)
        assert readable, "the broker did not answer the waiting fetch"

        waits: list[float] = []
        network_poll = consumer._network.poll

        def recording_poll(timeout: float):
            waits.append(timeout)
            return network_poll(timeout)

        consumer._network.poll = recording_poll  # type: ignore[method-assign]
        records = consumer.poll(timeout_ms=5_000)
        consumer._network.poll = network_poll  # type: ignore[method-assign]
        # The next fetch now waits at the broker for 10 s, and the fetch that closes the session is answered
        # after it: close without waiting that long.
        consumer.close(timeout_ms=200)

    assert [r.value for r in records] == [b"wake"]
    assert all(wait == 0 for wait in waits), f"poll blocked with data in hand: waits {waits}"



def test_a_seek_past_an_answered_fetch_sends_the_next_fetch_before_waiting(broker, topic_name) -> None:
    # A consumer kept between reads (Spark's executors keep them) seeks elsewhere while its last fetch's
    # answer waits in the socket: that answer is for the old position and is dropped, and the fetch for
    # the new one must go out at once, not after the poll's wait on a connection with nothing in flight.
    topic = create_topic(broker.bootstrap, topic_name())
    tp = TopicPartition(topic, 0)
    with Consumer(broker.bootstrap, fetch_max_wait_ms=10_000) as consumer, \
            Producer(broker.bootstrap, **broker.producer_settings(linger_ms=0)) as producer:
        for value in (b"a", b"b", b"c"):
            producer.send(topic, value).result(10)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        read: list[bytes] = []
        for _ in range(50):
            read += [r.value for r in consumer.poll(timeout_ms=200)]
            if len(read) == 3:
                break
        assert read == [b"a", b"b", b"c"]  # and a fetch at offset 3 now waits at the broker
        producer.send(topic, b"d").result(10)
        connections = list(consumer._network._connections.values())
        readable, _, _ = select.select([c.fileno() for c in connections], [], [], 10)
        assert readable, "the broker did not answer the waiting fetch"

        consumer.seek(tp, 1)
        waits: list[tuple[float, bool]] = []
        network_poll = consumer._network.poll

        def recording_poll(timeout: float):
            waits.append((timeout, bool(consumer._fetcher._fetches)))
            return network_poll(timeout)

        consumer._network.poll = recording_poll  # type: ignore[method-assign]
        records = consumer.poll(timeout_ms=5_000)
        consumer._network.poll = network_poll  # type: ignore[method-assign]
        consumer.close(timeout_ms=200)

    assert [r.offset for r in records][:1] == [1]
    idle = [timeout for timeout, fetching in waits if timeout > 0 and not fetching]
    assert not idle, f"poll waited with no fetch in flight: waits {waits}"
