from __future__ import annotations

import socket
from typing import Any

import pytest

from broker_core.server.embedded import EmbeddedBroker
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import ClientConnection, Response


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with EmbeddedBroker(tmp_path_factory.mktemp("server")) as running:
        yield running


class RawClient:
    """A blocking connection speaking the codec directly, for byte-level checks."""

    def __init__(self, bootstrap: str) -> None:
        host, port = bootstrap.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.codec = ClientConnection(client_id="raw-test")

    def send(self, api_key: ApiKey, version: int, body: Any) -> int:
        correlation_id, frame = self.codec.send_request(api_key, version, body)
        self.sock.sendall(frame)
        return correlation_id

    def receive(self) -> Response:
        while True:
            response = self.codec.next_response()
            if response is not None:
                return response
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("broker closed the connection")
            self.codec.receive_data(data)

    def call(self, api_key: ApiKey, version: int, body: Any) -> Any:
        self.send(api_key, version, body)
        return self.receive().body

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def raw(broker):
    client = RawClient(broker.bootstrap_servers)
    yield client
    client.close()
