"""A TCP proxy on 127.0.0.1 that holds every chunk of bytes ``delay_s`` before forwarding it.

Puts a network's round trip between a client and a broker on one machine:
start the broker with ``advertised.listeners`` naming the proxy's port, so
clients reach it only through the proxy. Each direction of a connection is
one daemon thread; chunks keep their order. Benchmarks only.
"""

from __future__ import annotations

import socket
import threading
import time
from contextlib import suppress


class LatencyProxy:
    def __init__(self, target_port: int, delay_s: float, *, listen_port: int = 0) -> None:
        self.target = ("127.0.0.1", target_port)
        self.delay_s = delay_s
        self._server = socket.create_server(("127.0.0.1", listen_port))
        self.port = self._server.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, name="latency-proxy-accept", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with suppress(OSError):
            while chunk := source.recv(1 << 16):
                time.sleep(self.delay_s)
                sink.sendall(chunk)
        with suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self._closed = True
        self._server.close()
