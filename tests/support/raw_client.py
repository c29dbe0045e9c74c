"""One blocking Kafka connection speaking Spate's codec directly, for byte-level tests and benchmarks.

No client threads or buffering: a test sees exactly the requests it sends and
the answers in the order the broker gives them, several may be in flight, and
a benchmark can hold hundreds of these and time each round trip itself
(``sock`` and ``codec`` are there for a selector of its own).
"""

from __future__ import annotations

import socket
from typing import Any

from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import ClientConnection, Response


class RawClient:
    def __init__(self, bootstrap: str, client_id: str = "raw-test", timeout: float = 30.0) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.codec = ClientConnection(client_id=client_id)

    def send(self, api_key: ApiKey, version: int, body: Any) -> int:
        """Send one request; its correlation id."""
        correlation_id, frame = self.codec.send_request(api_key, version, body)
        self.sock.sendall(frame)
        return correlation_id

    def receive(self) -> Response:
        """The next answer, in the order the requests were sent."""
        while True:
            response = self.codec.next_response()
            if response is not None:
                return response
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("broker closed the connection")
            self.codec.receive_data(data)

    def call(self, api_key: ApiKey, version: int, body: Any) -> Any:
        """One request's answer body."""
        self.send(api_key, version, body)
        return self.receive().body

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
