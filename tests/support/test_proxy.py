"""The fault-injecting proxy the fault tests rely on: it forwards, cuts (all or one peer), goes silent and heals."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from tests.support.ports import free_port
from tests.support.proxy import LinkState, TcpProxy
from tests.support.socket_owner import owner_pid


@pytest.fixture
def echo_port() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=lambda c=conn: _echo(c), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


def _echo(conn: socket.socket) -> None:
    with conn:
        try:
            while data := conn.recv(4096):
                conn.sendall(data)
        except ConnectionResetError:
            pass  # the proxy cut the link: what these tests do


def _round_trip(port: int, payload: bytes = b"ping", timeout: float = 2.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(payload)
        return sock.recv(4096)


def test_an_open_link_forwards_both_ways(echo_port: int) -> None:
    proxy = TcpProxy("127.0.0.1", echo_port)
    try:
        assert _round_trip(proxy.port) == b"ping"
    finally:
        proxy.close()


def test_a_partition_resets_open_connections_and_refuses_new_ones_until_healed(echo_port: int) -> None:
    proxy = TcpProxy("127.0.0.1", echo_port)
    try:
        open_conn = socket.create_connection(("127.0.0.1", proxy.port), timeout=2)
        open_conn.sendall(b"a")
        assert open_conn.recv(16) == b"a"
        proxy.partition()
        with pytest.raises(OSError):
            open_conn.sendall(b"b" * 65536)
            if not open_conn.recv(16):
                raise ConnectionResetError("closed")
        with pytest.raises(OSError):
            if not _round_trip(proxy.port):
                raise ConnectionResetError("closed")
        proxy.heal()
        assert proxy.state is LinkState.OPEN and _round_trip(proxy.port) == b"ping"
    finally:
        proxy.close()


def test_a_blackhole_keeps_connections_open_but_silent(echo_port: int) -> None:
    proxy = TcpProxy("127.0.0.1", echo_port)
    try:
        conn = socket.create_connection(("127.0.0.1", proxy.port), timeout=0.5)
        proxy.blackhole()
        conn.sendall(b"hello")
        with pytest.raises(socket.timeout):
            conn.recv(16)
        proxy.heal()
        conn.settimeout(2)
        assert conn.recv(16) == b"hello"
    finally:
        proxy.close()


def test_the_owner_of_a_connection_is_found_among_candidate_processes(echo_port: int) -> None:
    with socket.create_connection(("127.0.0.1", echo_port), timeout=2) as conn:
        client = conn.getsockname()
        assert owner_pid(client, echo_port, [os.getpid()]) == os.getpid()
        assert owner_pid(client, echo_port, []) is None
        assert owner_pid(client, echo_port + 1, [os.getpid()]) is None  # no such connection


def test_cutting_off_one_peer_resets_and_refuses_only_its_connections(echo_port: int) -> None:
    listen_port = free_port()
    # This process is "me"; a child process is anyone else.
    identify = lambda peer: "me" if owner_pid(peer, listen_port, [os.getpid()]) else None  # noqa: E731
    proxy = TcpProxy("127.0.0.1", echo_port, listen_port=listen_port, identify=identify)
    try:
        mine = socket.create_connection(("127.0.0.1", proxy.port), timeout=2)
        mine.sendall(b"a")
        assert mine.recv(16) == b"a"
        proxy.cut_off("me")
        with pytest.raises(OSError):
            mine.sendall(b"b" * 65536)
            if not mine.recv(16):
                raise ConnectionResetError("closed")
        with pytest.raises(OSError):
            if not _round_trip(proxy.port):
                raise ConnectionResetError("closed")
        assert _child_round_trip(proxy.port) == "ping"  # others still pass
        proxy.restore("me")
        assert _round_trip(proxy.port) == b"ping" and proxy.accepted >= 3
    finally:
        proxy.close()


def _child_round_trip(port: int) -> str:
    code = (
        "import socket;"
        f"s = socket.create_connection(('127.0.0.1', {port}), timeout=5);"
        "s.sendall(b'ping'); print(s.recv(16).decode())"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30).stdout.strip()
