"""Per-listener connection limits and the inter-broker listener's room at max.connections, on a real broker.

- ``listener.name.<listener>.max.connections`` (KIP-402): past it, that listener's new connections wait in
  its backlog while the other listeners still accept;
- at ``max.connections``, a connection on the inter-broker listener is still accepted, and the least recently
  used connection of another listener is closed to make room, as Kafka does.
"""

from __future__ import annotations

import socket
import time

import pytest

from tests.scenarios.connections.raw_clients import (
    answers_api_versions,
    api_versions_frame,
    closed_by_peer,
    connect,
)
from tests.support.broker_process import BrokerProcess
from tests.support.ports import free_port

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


@pytest.fixture
def two_listener_broker(tmp_path):
    """Start a broker with a CLIENT listener (its ``port``) and an inter-broker BROKER listener; yields
    ``(start, broker_port)`` where ``start(**overrides)`` starts it."""
    started: list[BrokerProcess] = []
    client_port, broker_port = free_port(), free_port()

    def start(**overrides: str) -> BrokerProcess:
        broker = BrokerProcess(tmp_path / "broker", port=client_port, overrides={
            "listeners": f"CLIENT://127.0.0.1:{client_port},BROKER://127.0.0.1:{broker_port}",
            "listener.security.protocol.map": "CLIENT:PLAINTEXT,BROKER:PLAINTEXT",
            "inter.broker.listener.name": "BROKER",
            **overrides,
        })
        started.append(broker)
        return broker.start()

    yield start, broker_port
    for broker in started:
        assert broker.stop() == 0, broker.log_tail()


def served(port: int, correlation_id: int = 1) -> socket.socket:
    sock = connect(port)
    assert answers_api_versions(sock, correlation_id), f"a connection to port {port} was not served"
    return sock


def wait_for_log(broker: BrokerProcess, text: str, within: float = 5.0) -> str:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        for line in broker.log_path.read_text(errors="replace").splitlines():
            if text in line:
                return line
        time.sleep(0.05)
    pytest.fail(f"no log line with {text!r} within {within}s:\n{broker.log_tail()}")


def test_a_listener_at_its_max_connections_makes_new_ones_wait_while_other_listeners_accept(two_listener_broker):
    start, broker_port = two_listener_broker
    broker = start(**{"listener.name.client.max.connections": "2"})
    first, second = served(broker.port), served(broker.port)
    try:
        with connect(broker.port) as waiting:
            waiting.sendall(api_versions_frame(42))
            waiting.settimeout(1.5)
            with pytest.raises(TimeoutError):
                waiting.recv(4)
            wait_for_log(broker, "listener CLIENT reached listener.name.client.max.connections=2")
            with served(broker_port):  # the other listener is not limited by CLIENT's cap
                pass
            first.close()
            waiting.settimeout(5.0)
            assert len(waiting.recv(4)) == 4, "the waiting connection was not served once a CLIENT slot freed"
    finally:
        first.close()
        second.close()


def test_at_max_connections_an_inter_broker_connection_closes_the_least_recently_used_client(two_listener_broker):
    start, broker_port = two_listener_broker
    broker = start(**{"max.connections": "2"})
    older, newer = served(broker.port, 1), served(broker.port, 2)
    try:
        assert answers_api_versions(older, 3)
        time.sleep(0.05)
        assert answers_api_versions(newer, 4)  # now ``older`` is the least recently used
        with served(broker_port, 5) as replication:
            assert closed_by_peer(older, within=5.0), "the least recently used client connection stayed open"
            assert answers_api_versions(newer, 6), "a more recently used client connection was closed"
            assert answers_api_versions(replication, 7)
        line = wait_for_log(broker, "the least recently used connection")
        assert "max.connections=2" in line and "listener CLIENT" in line and "BROKER" in line
    finally:
        older.close()
        newer.close()
