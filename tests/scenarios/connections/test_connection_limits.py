"""Connection limits of a real broker process, as a Kafka user sees them.

- ``socket.listen.backlog.size`` is the backlog of the listening socket (``ss`` shows it as Send-Q);
- ``max.connections.per.ip``: one connection more from an address is closed at once;
- ``max.connections``: one connection more waits, unanswered, until another closes;
- ``connections.max.idle.ms``: a connection that completes no request for that long is closed, whether it
  sends nothing, trickles a frame a byte at a time, or sends a size prefix and stops.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

import pytest

from tests.scenarios.connections.raw_clients import (
    answers_api_versions,
    api_versions_frame,
    closed_by_peer,
    connect,
)
from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


@pytest.fixture
def start_broker(tmp_path):
    started: list[BrokerProcess] = []

    def start(**overrides: str) -> BrokerProcess:
        broker = BrokerProcess(tmp_path / f"broker-{len(started)}", overrides=overrides)
        started.append(broker)
        return broker.start()

    yield start
    for broker in started:
        assert broker.stop() == 0, broker.log_tail()


def served_connection(port: int, within: float = 5.0) -> socket.socket:
    """A connection the broker answers on, retried while a closed one still counts against a limit."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        sock = connect(port)
        if answers_api_versions(sock):
            return sock
        sock.close()
        time.sleep(0.1)
    pytest.fail(f"no connection to port {port} was served within {within}s")


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2)")
def test_the_listen_backlog_is_socket_listen_backlog_size(start_broker):
    broker = start_broker(**{"socket.listen.backlog.size": "77"})
    out = subprocess.run(["ss", "-ltnH", f"sport = :{broker.port}"], capture_output=True, text=True, check=True)
    columns = out.stdout.split()
    assert columns[0] == "LISTEN" and columns[2] == "77", out.stdout


def test_a_connection_over_max_connections_per_ip_is_closed_at_once(start_broker):
    broker = start_broker(**{"max.connections.per.ip": "3"})
    # The start-up probe's connection counts until the broker has seen it close.
    held = [served_connection(broker.port) for _ in range(3)]
    try:
        with connect(broker.port) as extra:
            assert closed_by_peer(extra, within=5.0)
        held.pop().close()
        held.append(served_connection(broker.port))
    finally:
        for sock in held:
            sock.close()


def test_a_connection_over_max_connections_waits_until_another_closes(start_broker):
    broker = start_broker(**{"max.connections": "2"})
    first, second = served_connection(broker.port), served_connection(broker.port)
    try:
        # The kernel completes the handshake (the connection sits in the backlog), but the broker does not accept.
        with connect(broker.port) as waiting:
            waiting.sendall(api_versions_frame(42))
            waiting.settimeout(1.5)
            with pytest.raises(TimeoutError):
                waiting.recv(4)
            first.close()
            waiting.settimeout(5.0)
            assert len(waiting.recv(4)) == 4, "the waiting connection was not served once a slot freed"
    finally:
        first.close()
        second.close()


def test_idle_and_slow_loris_connections_are_closed_after_connections_max_idle_ms(start_broker):
    broker = start_broker(**{"connections.max.idle.ms": "1000"})
    silent = connect(broker.port)
    prefix_only = connect(broker.port)
    prefix_only.sendall(b"\x00\x00\x10\x00")  # announces 4096 bytes, sends none of them
    trickle = connect(broker.port)
    active = connect(broker.port)
    frame = api_versions_frame(7)
    started = time.monotonic()
    try:
        # For 2.5 s: the trickler sends one byte every 100 ms (never a whole frame); the active one a request
        # every 300 ms.
        sent, correlation, closed_at = 0, 0, {}
        while time.monotonic() - started < 2.5:
            try:
                trickle.sendall(bytes([frame[sent % len(frame)] if sent < len(frame) - 1 else 0]))
                sent = min(sent + 1, len(frame) - 2)
            except OSError:
                closed_at.setdefault("trickle", time.monotonic() - started)
            if int((time.monotonic() - started) / 0.3) > correlation:
                correlation += 1
                assert answers_api_versions(active, correlation), "an active connection was closed"
            time.sleep(0.1)
        for name, sock in (("silent", silent), ("prefix_only", prefix_only), ("trickle", trickle)):
            assert name in closed_at or closed_by_peer(sock, within=1.5), f"{name} connection was not closed"
        assert answers_api_versions(active, 999)
    finally:
        for sock in (silent, prefix_only, trickle, active):
            sock.close()
