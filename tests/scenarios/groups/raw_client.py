"""A blocking Kafka-protocol connection built on Spate's codec, for byte-level group requests."""

from __future__ import annotations

import socket
from typing import Any

from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import ClientConnection


class RawClient:
    def __init__(self, bootstrap: str, client_id: str = "raw-group-test") -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.codec = ClientConnection(client_id=client_id)

    def call(self, api_key: ApiKey, version: int, body: Any) -> Any:
        _, frame = self.codec.send_request(api_key, version, body)
        self.sock.sendall(frame)
        while True:
            response = self.codec.next_response()
            if response is not None:
                return response.body
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("broker closed the connection")
            self.codec.receive_data(data)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "RawClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
