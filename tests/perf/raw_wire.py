"""One raw Kafka connection for the benchmarks: requests encoded with Spate's codec, answers read back.

No client threads or buffering, so a benchmark can hold hundreds of them and
time each round trip itself; several requests may be in flight on one.
"""

from __future__ import annotations

import socket
from typing import Any

from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import ClientConnection


class Wire:
    def __init__(self, bootstrap: str, client_id: str = "spate-bench") -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=60)
        self.codec = ClientConnection(client_id=client_id)

    def send(self, api_key: ApiKey, version: int, body: Any) -> None:
        self.sock.sendall(self.codec.send_request(api_key, version, body)[1])

    def receive(self) -> Any:
        """The next answer's body, in the order the requests were sent."""
        while True:
            response = self.codec.next_response()
            if response is not None:
                return response.body
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("broker closed the connection")
            self.codec.receive_data(data)

    def call(self, api_key: ApiKey, version: int, body: Any) -> Any:
        self.send(api_key, version, body)
        return self.receive()
