"""A fault-injecting TCP proxy on 127.0.0.1, for network partitions between real processes.

Put one in front of a server and point its peers at the proxy: bytes flow
both ways until the test cuts the link. ``partition()`` drops every open
connection and refuses new ones (a peer sees a reset, then connection
refused); ``blackhole()`` keeps connections open but forwards nothing, as a
silent network does, so only timeouts reveal it; ``heal()`` restores normal
service. Everything runs on daemon threads and stops with ``close()``.

A proxy can also cut one peer off while others pass: given ``identify``
(the connecting peer's address to a name, e.g. the process that owns the
socket, :mod:`tests.support.socket_owner`), ``cut_off(name)`` resets that
peer's connections and refuses its new ones until ``restore(name)``.
"""

from __future__ import annotations

import enum
import selectors
import socket
import threading
from collections import Counter
from contextlib import suppress
from typing import Callable

# The connecting peer's (host, port) to the name of whoever connects; None when unknown.
Identify = Callable[[tuple[str, int]], "str | None"]


class LinkState(enum.Enum):
    OPEN = "open"
    PARTITIONED = "partitioned"
    BLACKHOLED = "blackholed"


class TcpProxy:
    def __init__(
        self, target_host: str, target_port: int, *, listen_port: int = 0, identify: Identify | None = None
    ) -> None:
        self.target = (target_host, target_port)
        self._identify = identify
        self._cut_off: set[str] = set()
        self.accepted = 0
        # Connections forwarded, by the name ``identify`` gave their peer (None: unknown).
        self.accepted_from: Counter[str | None] = Counter()
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", listen_port))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self._state = LinkState.OPEN
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket, str | None]] = []
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
        for client, upstream, _ in pairs:
            _reset(client)
            _reset(upstream)

    def cut_off(self, source: str) -> None:
        """Reset the connections of peer ``source`` and refuse its new ones until ``restore``; others pass."""
        with self._lock:
            self._cut_off.add(source)
            cut = [pair for pair in self._pairs if pair[2] == source]
            self._pairs = [pair for pair in self._pairs if pair[2] != source]
        for client, upstream, _ in cut:
            _reset(client)
            _reset(upstream)

    def restore(self, source: str) -> None:
        with self._lock:
            self._cut_off.discard(source)

    def is_cut_off(self, source: str) -> bool:
        with self._lock:
            return source in self._cut_off

    def blackhole(self) -> None:
        """Keep connections open but forward nothing (new ones hang unanswered)."""
        with self._lock:
            self._state = LinkState.BLACKHOLED

    def heal(self) -> None:
        with self._lock:
            self._state = LinkState.OPEN
            self._cut_off.clear()

    def close(self) -> None:
        self._closed.set()
        with suppress(OSError):
            self._listener.close()
        self.partition()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, peer = self._listener.accept()
            except OSError:
                return
            source = self._identify(peer) if self._identify is not None else None
            if self._state is LinkState.PARTITIONED or (source is not None and self.is_cut_off(source)):
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
                self._pairs.append((client, upstream, source))
                self.accepted += 1
                self.accepted_from[source] += 1
            threading.Thread(target=self._pump, args=(client, upstream, source), daemon=True).start()

    def _pump(self, client: socket.socket, upstream: socket.socket, source: str | None) -> None:
        selector = selectors.DefaultSelector()
        selector.register(client, selectors.EVENT_READ, upstream)
        selector.register(upstream, selectors.EVENT_READ, client)
        try:
            while not self._closed.is_set():
                if self._state is LinkState.PARTITIONED or (source is not None and self.is_cut_off(source)):
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
                if (client, upstream, source) in self._pairs:
                    self._pairs.remove((client, upstream, source))
            _reset(client)
            _reset(upstream)


def _reset(sock: socket.socket) -> None:
    """Close with an RST, as a cut cable or a dropping firewall rule looks to the peer."""
    with suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    with suppress(OSError):
        sock.close()
