"""The controller's connections to brokers (Kafka's ControllerChannelManager).

One sender thread per live broker, each with its own queue: requests to one
broker go out one at a time and in order (a LeaderAndIsr must reach a broker
before the UpdateMetadata that describes its outcome), while a slow or dead
broker never delays the others. A request that cannot be delivered is retried
on a fresh connection after a back-off until it is answered or the broker is
removed (it left the cluster, or this broker stopped being controller).

Requests are encoded with the sans-IO ``spate.protocol.ClientConnection``; the
socket work is the only I/O here. The controller speaks a fixed version of
each inter-broker API: every broker of a cluster runs this same software.
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from broker_core.security.inter_broker import PLAINTEXT, InterBrokerSecurity
from spate.protocol import ClientConnection, ProtocolError

logger = logging.getLogger(__name__)

ResponseCallback = Callable[[Any], None]
_STOP = object()
# A broker that is starting or stopping refuses connections for a moment: that is logged at INFO.
# A request failing for longer than this is worth a WARNING (the broker is down or unreachable).
WARN_AFTER_S = 5.0


@dataclass(frozen=True, slots=True)
class BrokerEndpoint:
    broker_id: int
    host: str
    port: int


@dataclass(frozen=True, slots=True)
class _Queued:
    api_key: int
    api_version: int
    body: Any
    on_response: ResponseCallback | None


class _SenderThread(threading.Thread):
    """Delivers one broker's requests in order, reconnecting as needed."""

    def __init__(self, endpoint: BrokerEndpoint, *, client_id: str, timeout_s: float, backoff_s: float,
                 security: InterBrokerSecurity = PLAINTEXT) -> None:
        self._security = security
        super().__init__(name=f"controller-to-broker-{endpoint.broker_id}", daemon=True)
        self.endpoint = endpoint
        self.requests: queue.Queue[Any] = queue.Queue()
        self._client_id = client_id
        self._timeout_s = timeout_s
        self._backoff_s = backoff_s
        self._stopped = threading.Event()
        self._sock: socket.socket | None = None
        self._connection: ClientConnection | None = None

    def stop(self) -> None:
        self._stopped.set()
        self.requests.put(_STOP)
        sock = self._sock
        if sock is not None:
            # Wakes a send or receive blocked on a broker that does not answer.
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def run(self) -> None:
        while not self._stopped.is_set():
            item = self.requests.get()
            if item is _STOP:
                break
            response = self._deliver(item)
            if response is not None and item.on_response is not None:
                try:
                    item.on_response(response)
                except Exception:
                    logger.exception("controller: handling the answer of broker %d failed", self.endpoint.broker_id)
        self._close()

    def _deliver(self, item: _Queued) -> Any:
        """Send until answered; None if this thread was stopped first."""
        first_failure: float | None = None
        while not self._stopped.is_set():
            try:
                return self._round_trip(item)
            except (OSError, ProtocolError) as exc:
                now = time.monotonic()
                first_failure = now if first_failure is None else first_failure
                logger.log(
                    logging.WARNING if now - first_failure >= WARN_AFTER_S else logging.INFO,
                    "controller: request %d to broker %d at %s:%d failed (%s); retrying",
                    item.api_key, self.endpoint.broker_id, self.endpoint.host, self.endpoint.port, exc,
                )
                self._close()
                self._stopped.wait(self._backoff_s)
        return None

    def _round_trip(self, item: _Queued) -> Any:
        if self._sock is None:
            self._sock = self._security.connect(self.endpoint.host, self.endpoint.port, timeout=self._timeout_s)
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._connection = ClientConnection(self._client_id)
        connection = self._connection
        _, frame = connection.send_request(item.api_key, item.api_version, item.body)
        self._sock.sendall(frame)
        while True:
            response = connection.next_response()
            if response is not None:
                return response.body
            data = self._sock.recv(1 << 16)
            if not data:
                raise ConnectionError("the broker closed the connection")
            connection.receive_data(data)

    def _close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
        self._sock = None
        self._connection = None


class ControllerChannelManager:
    """Per-broker request queues of the active controller."""

    def __init__(self, *, controller_id: int, timeout_s: float = 30.0, backoff_s: float = 0.1,
                 security: InterBrokerSecurity = PLAINTEXT) -> None:
        self._client_id = f"controller-{controller_id}"
        self._security = security
        self._timeout_s = timeout_s
        self._backoff_s = backoff_s
        self._senders: dict[int, _SenderThread] = {}
        self._lock = threading.Lock()

    def add_broker(self, endpoint: BrokerEndpoint) -> None:
        """Start talking to a broker; a changed address replaces its connection."""
        with self._lock:
            current = self._senders.get(endpoint.broker_id)
            if current is not None and current.endpoint == endpoint:
                return
            if current is not None:
                current.stop()
            sender = _SenderThread(
                endpoint, client_id=self._client_id, timeout_s=self._timeout_s, backoff_s=self._backoff_s,
                security=self._security,
            )
            self._senders[endpoint.broker_id] = sender
            sender.start()

    def remove_broker(self, broker_id: int) -> None:
        """Stop talking to a broker; requests still queued for it are dropped."""
        with self._lock:
            sender = self._senders.pop(broker_id, None)
        if sender is not None:
            sender.stop()

    def brokers(self) -> set[int]:
        with self._lock:
            return set(self._senders)

    def send(
        self, broker_id: int, api_key: int, api_version: int, body: Any, on_response: ResponseCallback | None = None
    ) -> bool:
        """Queue a request for ``broker_id``; False when the broker is not known (not alive)."""
        with self._lock:
            sender = self._senders.get(broker_id)
        if sender is None:
            return False
        sender.requests.put(_Queued(api_key, api_version, body, on_response))
        return True

    def shutdown(self) -> None:
        with self._lock:
            senders = list(self._senders.values())
            self._senders.clear()
        for sender in senders:
            sender.stop()
        for sender in senders:
            sender.join(timeout=self._timeout_s)
