"""A scripted stand-in for a broker, on 127.0.0.1, for connection-level client tests.

Each request is decoded with the protocol package's ServerConnection and
passed to ``handler(api_key, api_version, body)``, which returns the
response body, ``SILENT`` (never answer) or ``CLOSE`` (drop the connection).
ApiVersions is answered from ``versions`` unless the handler answers it or
``answer_api_versions`` is false.
"""

from __future__ import annotations

import socket
import threading
from typing import Any, Callable, Mapping

from spate.protocol import (
    ADVERTISED_VERSIONS,
    ApiKey,
    ServerConnection,
    UnsupportedVersionError,
    VersionRange,
)
from spate.protocol.messages.api_versions import api_versions_response

SILENT = object()
CLOSE = object()

Handler = Callable[[ApiKey, int, Any], Any]


class FakeBroker:
    def __init__(
        self,
        handler: Handler | None = None,
        versions: Mapping[ApiKey, VersionRange] = ADVERTISED_VERSIONS,
        answer_api_versions: bool = True,
    ):
        self.handler = handler or (lambda key, version, body: SILENT)
        self.versions = versions
        self.answer_api_versions = answer_api_versions
        self.requests: list[tuple[ApiKey, int]] = []
        self._server = socket.socket()
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(16)
        self.port = self._server.getsockname()[1]
        self._stopped = threading.Event()
        self._clients: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            self._clients.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        conn = ServerConnection(versions=self.versions)
        with client:
            while not self._stopped.is_set():
                try:
                    data = client.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                conn.receive_data(data)
                while True:
                    try:
                        request = conn.next_request()
                    except UnsupportedVersionError as exc:
                        header = exc.header
                        self.requests.append((ApiKey(header.api_key), header.api_version))
                        if header.api_key != ApiKey.API_VERSIONS:
                            return
                        client.sendall(conn.encode_unsupported_version(header.correlation_id))
                        continue
                    if request is None:
                        break
                    self.requests.append((request.api_key, request.api_version))
                    reply = self.handler(request.api_key, request.api_version, request.body)
                    if reply is SILENT and request.api_key == ApiKey.API_VERSIONS and self.answer_api_versions:
                        reply = api_versions_response(self.versions)
                    if reply is CLOSE:
                        return
                    if reply is SILENT or not request.expects_response:
                        continue
                    try:
                        client.sendall(conn.encode_response(
                            request.header.correlation_id, request.api_key, request.api_version, reply))
                    except OSError:
                        return  # the client went away while the answer was held

    def stop(self) -> None:
        self._stopped.set()
        self._server.close()
        for client in self._clients:
            try:
                client.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
