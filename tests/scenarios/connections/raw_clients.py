"""Raw TCP clients for the connection scenarios: Kafka frames written by hand, sockets owned by the test.

A frame is an int32 size and a payload; ``api_versions_frame`` is a complete
ApiVersions v0 request (header v1), which every broker answers, so a client can
tell a served connection from one the broker closed or has not accepted.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from dataclasses import dataclass, field

API_VERSIONS = 18


def api_versions_frame(correlation_id: int, client_id: str = "raw") -> bytes:
    client = client_id.encode()
    payload = struct.pack(">hhih", API_VERSIONS, 0, correlation_id, len(client)) + client
    return struct.pack(">i", len(payload)) + payload


def connect(port: int, timeout: float = 5.0) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def read_frame(sock: socket.socket) -> bytes:
    """One response payload; ConnectionError if the broker closed the connection first."""
    size = struct.unpack(">i", read_exactly(sock, 4))[0]
    return read_exactly(sock, size)


def read_exactly(sock: socket.socket, count: int) -> bytes:
    chunks, got = [], 0
    while got < count:
        chunk = sock.recv(min(count - got, 1 << 20))
        if not chunk:
            raise ConnectionError(f"closed by the broker after {got} of {count} bytes")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def answers_api_versions(sock: socket.socket, correlation_id: int = 1) -> bool:
    """True if the broker answers an ApiVersions request on ``sock`` (with that correlation id)."""
    try:
        sock.sendall(api_versions_frame(correlation_id))
        payload = read_frame(sock)
    except (OSError, ConnectionError):
        return False
    return struct.unpack(">i", payload[:4])[0] == correlation_id


def closed_by_peer(sock: socket.socket, within: float) -> bool:
    """True if the broker closes ``sock`` (EOF or reset) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            if sock.recv(65536) == b"":
                return True
        except socket.timeout:
            continue
        except ConnectionError:
            return True
    return False


@dataclass
class ClientStorm:
    """Threads that connect, pipeline ApiVersions requests, read some answers and hang up, over and over."""

    port: int
    threads: int = 12
    requests_per_connection: int = 20
    stop: threading.Event = field(default_factory=threading.Event)
    connections: int = 0
    _workers: list[threading.Thread] = field(default_factory=list)

    def start(self) -> ClientStorm:
        for index in range(self.threads):
            worker = threading.Thread(target=self._run, args=(index,), daemon=True, name=f"storm-{index}")
            worker.start()
            self._workers.append(worker)
        return self

    def join(self, timeout: float = 10.0) -> None:
        self.stop.set()
        deadline = time.monotonic() + timeout
        for worker in self._workers:
            worker.join(max(0.0, deadline - time.monotonic()))

    def _run(self, index: int) -> None:
        frames = b"".join(api_versions_frame(i) for i in range(self.requests_per_connection))
        while not self.stop.is_set():
            try:
                with connect(self.port, timeout=2.0) as sock:
                    self.connections += 1
                    sock.sendall(frames)
                    # Read only some answers: the rest are in flight when the client hangs up.
                    for _ in range(index % 3):
                        read_frame(sock)
            except (OSError, ConnectionError):
                time.sleep(0.005)
