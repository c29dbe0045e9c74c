"""A fault-injecting TCP proxy on 127.0.0.1, for network partitions between real processes.

Put one in front of a server and point its peers at the proxy: bytes flow
both ways until the test cuts the link. ``partition()`` drops every open
connection and refuses new ones (a peer sees a reset, then connection
refused); ``blackhole()`` keeps connections open but forwards nothing, as a
silent network does, so only timeouts reveal it; ``heal()`` restores normal
service. Everything runs on daemon threads and stops with ``close()``.
"""

from __future__ import annotations

import enum
import selectors
import socket
import threading
from contextlib import suppress


class LinkState(enum.Enum):
    OPEN = "open"
    PARTITIONED = "partitioned"
    BLACKHOLED = "blackholed"


class TcpProxy:
    def __init__(self, target_host: str, target_port: int, *, listen_port: int = 0) -> None:
        self.target = (target_host, target_port)
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", listen_port))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self._state = LinkState.OPEN
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._closed = threading.Event()
        threading.Thread(target=self._accept, name=f"proxy-{self.port}", daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def state(self) -> LinkState:
        return self._state

    def partition(self) -> None:
        """Reset every connection and refuse new ones until ``heal``."""
        with self._lock:
            self._state = LinkState.PARTITIONED
            pairs, self._pairs = self._pairs, []
        for client, upstream in pairs:
            _reset(client)
            _reset(upstream)

    def blackhole(self) -> None:
        """Keep connections open but forward nothing (new ones hang unanswered)."""
        with self._lock:
            self._state = LinkState.BLACKHOLED

    def heal(self) -> None:
        with self._lock:
            self._state = LinkState.OPEN

    def close(self) -> None:
        self._closed.set()
        with suppress(OSError):
            self._listener.close()
        self.partition()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._state is LinkState.PARTITIONED:
                _reset(client)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                _reset(client)
                continue
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.settimeout(None)
            with self._lock:
                self._pairs.append((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, client: socket.socket, upstream: socket.socket) -> None:
        selector = selectors.DefaultSelector()
        selector.register(client, selectors.EVENT_READ, upstream)
        selector.register(upstream, selectors.EVENT_READ, client)
        try:
            while not self._closed.is_set():
                if self._state is LinkState.PARTITIONED:
                    return
                for key, _ in selector.select(timeout=0.1):
                    if self._state is not LinkState.OPEN:
                        continue  # blackholed: leave the bytes unread, so the sender's window fills
                    data = key.fileobj.recv(65536)
                    if not data:
                        return
                    key.data.sendall(data)
                if self._state is LinkState.BLACKHOLED:
                    self._closed.wait(0.05)
        except OSError:
            return
        finally:
            selector.close()
            with self._lock:
                if (client, upstream) in self._pairs:
                    self._pairs.remove((client, upstream))
            _reset(client)
            _reset(upstream)


def _reset(sock: socket.socket) -> None:
    """Close with an RST, as a cut cable or a dropping firewall rule looks to the peer."""
    with suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    with suppress(OSError):
        sock.close()
