"""One TCP connection to one broker, over the sans-IO :class:`ClientConnection`.

``connect`` opens the socket and negotiates API versions, blocking until its
deadline. After that the socket is non-blocking: ``send`` writes a request
frame (waiting for buffer space no longer than the request's deadline) and
``read`` collects whatever responses have arrived, completing their
:class:`InFlightRequest`. Kafka answers in request order, and Produce with
``acks=0`` is never answered, so such a request completes as soon as it is
written.

Any socket error, malformed response or missed deadline breaks the
connection: it is closed and every request still on it fails with a
retriable :class:`NetworkError` (or :class:`KafkaTimeoutError` for the one
that timed out). Not thread-safe: one thread owns a connection.
"""

from __future__ import annotations

import select
import socket
import ssl
import time
from collections import deque
from dataclasses import dataclass, field
from importlib import metadata as package_metadata
from typing import Any, Callable

from spate.client.errors import BrokerUnavailableError, KafkaTimeoutError, NetworkError, UnsupportedApiError
from spate.client.net.api_versions import CLIENT_VERSIONS, broker_versions, choose_version
from spate.client.net.security import ClientSecurity
from spate.protocol import (
    ApiKey,
    ClientConnection,
    ErrorCode,
    KafkaError,
    ProtocolError,
    VersionRange,
    expects_response,
)
from spate.protocol.messages.api_versions import ApiVersionsRequest
from spate.protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from spate.protocol.messages.sasl_handshake import SaslHandshakeRequest
from spate.protocol.sasl import SaslClientError

SocketFactory = Callable[..., socket.socket]

SOFTWARE_NAME = "spate-python"
_RECV_SIZE = 1 << 20
# Buffers one sendmsg may take (the kernel's IOV_MAX is 1024 on Linux).
_MAX_WRITE_PARTS = 1024


def _software_version() -> str:
    try:
        return package_metadata.version("spate-platform")
    except package_metadata.PackageNotFoundError:
        return "0.0.0"


@dataclass(eq=False, slots=True)
class InFlightRequest:
    """A request written to a broker, waiting for (or holding) its outcome.

    Exactly one of ``response`` (the decoded response body) and ``error`` is
    set once ``done``. ``context`` is the caller's, e.g. the batches a
    Produce request carries.
    """

    node_id: int
    api_key: ApiKey
    api_version: int
    body: Any
    deadline: float
    expects_response: bool = True
    context: Any = None
    correlation_id: int = -1
    response: Any = None
    error: BaseException | None = None
    done: bool = False

    def complete(self, response: Any) -> None:
        self.response = response
        self.done = True

    def fail(self, error: BaseException) -> None:
        self.error = error
        self.done = True

    def result(self) -> Any:
        """The response body, or the failure raised."""
        if not self.done:
            raise RuntimeError("request still in flight")
        if self.error is not None:
            raise self.error
        return self.response


@dataclass(eq=False)
class BrokerConnection:
    """The client's connection to broker ``node_id`` at ``host:port``."""

    node_id: int
    host: str
    port: int
    client_id: str | None
    max_response_size: int = 0x7FFFFFFF
    clock: Callable[[], float] = time.monotonic
    socket_factory: SocketFactory = socket.create_connection
    versions: dict[int, VersionRange] = field(default_factory=dict)
    # TLS and SASL (security_protocol); None is PLAINTEXT.
    security: ClientSecurity | None = None
    _sock: socket.socket | None = None
    _protocol: ClientConnection | None = None
    _in_flight: deque[InFlightRequest] = field(default_factory=deque)
    # Received bytes land here (allocated at connect): ``recv`` would allocate a fresh
    # megabyte per call, costing more than small responses take to handle.
    _recv_buffer: memoryview | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def connected(self) -> bool:
        return self._sock is not None

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    def fileno(self) -> int:
        if self._sock is None:
            raise NetworkError(f"connection to {self.address} is closed", self.address)
        return self._sock.fileno()

    def describe(self) -> str:
        node = f"broker {self.node_id}" if self.node_id >= 0 else "bootstrap server"
        return f"{node} at {self.address}"

    # --- setup -----------------------------------------------------------------------------

    def connect(self, deadline: float) -> None:
        """Open the socket and negotiate versions; BrokerUnavailableError on any failure."""
        timeout = deadline - self.clock()
        if timeout <= 0:
            raise BrokerUnavailableError(f"no time left to connect to {self.describe()}", self.address)
        try:
            sock = self.socket_factory((self.host, self.port), timeout=timeout)
        except socket.timeout:
            raise BrokerUnavailableError(
                f"cannot connect to {self.describe()}: connect timed out after {timeout * 1000:.0f} ms",
                self.address,
            ) from None
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise BrokerUnavailableError(f"cannot connect to {self.describe()}: {reason}", self.address) from exc
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass  # not every socket type supports it (e.g. AF_UNIX in tests)
        if self.security is not None:
            try:
                sock = self.security.wrap(sock, self.host, max(0.001, deadline - self.clock()))
            except (OSError, ValueError) as exc:
                sock.close()
                raise BrokerUnavailableError(f"TLS with {self.describe()} failed: {exc}", self.address) from exc
        sock.setblocking(False)
        self._sock = sock
        if self._recv_buffer is None:
            self._recv_buffer = memoryview(bytearray(_RECV_SIZE))
        self._protocol = ClientConnection(self.client_id, max_response_size=self.max_response_size)
        try:
            self._negotiate(deadline)
            self._authenticate(deadline)
        except (NetworkError, KafkaTimeoutError) as exc:
            self.close()
            raise BrokerUnavailableError(f"cannot set up connection to {self.describe()}: {exc}", self.address) from exc
        except BaseException:
            self.close()
            raise

    def _negotiate(self, deadline: float) -> None:
        version = CLIENT_VERSIONS[ApiKey.API_VERSIONS].max
        for _ in range(2):
            body = ApiVersionsRequest(client_software_name=SOFTWARE_NAME, client_software_version=_software_version())
            request = self.send(ApiKey.API_VERSIONS, version, body, deadline)
            while not request.done:
                self._wait_readable(deadline, request)
                self.read()
            response = request.result()
            advertised = broker_versions(response)
            if response.error_code == ErrorCode.UNSUPPORTED_VERSION:
                # The broker answered in v0 with its own table: retry at the best common version.
                version = choose_version(ApiKey.API_VERSIONS, advertised or {ApiKey.API_VERSIONS: VersionRange(0, 0)})
                continue
            if response.error_code != ErrorCode.NONE:
                raise KafkaError(response.error_code, f"ApiVersions from {self.describe()}")
            self.versions = advertised
            return
        raise UnsupportedApiError(f"{self.describe()} refuses every ApiVersions version this client speaks")

    def _call(self, api_key: ApiKey, version: int, body: Any, deadline: float) -> Any:
        request = self.send(api_key, version, body, deadline)
        while not request.done:
            self._wait_readable(deadline, request)
            self.read()
        return request.result()

    def _authenticate(self, deadline: float) -> None:
        """SASL after ApiVersions: SaslHandshake v1, then SaslAuthenticate rounds until the mechanism is done."""
        client = self.security.new_sasl_client() if self.security is not None else None
        if client is None:
            return
        handshake = self._call(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism=client.mechanism), deadline)
        if handshake.error_code != ErrorCode.NONE:
            raise KafkaError(handshake.error_code, f"{self.describe()} does not offer SASL {client.mechanism} "
                                                   f"(it offers {', '.join(handshake.mechanisms)})")
        version = self.version(ApiKey.SASL_AUTHENTICATE, max_version=1)
        message: bytes | None = client.first()
        while message is not None:
            response = self._call(ApiKey.SASL_AUTHENTICATE, version, SaslAuthenticateRequest(auth_bytes=message),
                                  deadline)
            if response.error_code != ErrorCode.NONE:
                raise KafkaError(response.error_code, response.error_message or "SASL authentication failed")
            try:
                message = client.respond(response.auth_bytes)
            except SaslClientError as exc:
                raise KafkaError(ErrorCode.SASL_AUTHENTICATION_FAILED, str(exc)) from None

    def _wait_readable(self, deadline: float, request: InFlightRequest) -> None:
        remaining = deadline - self.clock()
        if remaining <= 0:
            self._break(KafkaTimeoutError(f"{self.describe()} did not answer {request.api_key.name} in time"), request)
            return
        readable, _, _ = select.select([self.fileno()], [], [], remaining)
        if not readable and self.clock() >= deadline:
            self._break(KafkaTimeoutError(f"{self.describe()} did not answer {request.api_key.name} in time"), request)

    def version(self, api_key: int, *, min_version: int | None = None, max_version: int | None = None) -> int:
        """The version to speak for ``api_key`` on this connection."""
        return choose_version(api_key, self.versions, min_version=min_version, max_version=max_version)

    # --- requests and responses -----------------------------------------------------------------

    def send(self, api_key: ApiKey, version: int, body: Any, deadline: float, context: Any = None) -> InFlightRequest:
        """Write one request; a request that expects no response comes back already done."""
        if self._sock is None or self._protocol is None:
            raise NetworkError(f"connection to {self.describe()} is closed", self.address)
        correlation_id, parts = self._protocol.send_request_parts(api_key, version, body)
        expects = expects_response(api_key, body)
        request = InFlightRequest(
            self.node_id, ApiKey(api_key), version, body, deadline, expects, context, correlation_id
        )
        if expects:
            self._in_flight.append(request)
        self._write_all(parts, deadline, request)
        if not expects:
            request.complete(None)
        return request

    def _write_all(self, parts: list[Any], deadline: float, request: InFlightRequest) -> None:
        """Write the frame's parts with scatter-gather writes: large records are never copied."""
        views = [memoryview(part) for part in parts]
        sock = self._sock
        while views:
            try:
                if isinstance(sock, ssl.SSLSocket):  # no sendmsg over TLS: one part at a time
                    sent = sock.send(views[0])
                else:
                    sent = sock.sendmsg(views[:_MAX_WRITE_PARTS])  # type: ignore[union-attr]
            except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
                remaining = deadline - self.clock()
                if remaining <= 0:
                    error = KafkaTimeoutError(f"could not write {request.api_key.name} to {self.describe()} in time")
                    self._break(error, request)
                    raise error
                select.select([], [sock], [], remaining)
                continue
            except OSError as exc:
                error = NetworkError(f"connection to {self.describe()} failed: {exc.strerror or exc}", self.address)
                self._break(error)
                raise error from exc
            while sent and sent >= views[0].nbytes:
                sent -= views.pop(0).nbytes
            if sent:
                views[0] = views[0][sent:]

    def read(self) -> list[InFlightRequest]:
        """Take in whatever bytes have arrived; return the requests they completed.

        A closed or failing connection is broken first, and the requests it
        fails are returned too.
        """
        sock, protocol, buffer = self._sock, self._protocol, self._recv_buffer
        if sock is None or protocol is None or buffer is None:
            return []
        completed: list[InFlightRequest] = []
        try:
            while True:
                try:
                    size = sock.recv_into(buffer)
                except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                    break
                if not size:
                    raise NetworkError(f"{self.describe()} closed the connection", self.address)
                protocol.receive_data(buffer[:size])
                while (response := protocol.next_response()) is not None:
                    request = self._in_flight.popleft()
                    request.complete(response.body)
                    completed.append(request)
                if size < _RECV_SIZE and not (isinstance(sock, ssl.SSLSocket) and sock.pending()):
                    break
        except ProtocolError as exc:
            completed.extend(self._break(NetworkError(f"malformed response from {self.describe()}: {exc}", self.address)))
        except NetworkError as exc:
            completed.extend(self._break(exc))
        except OSError as exc:
            error = NetworkError(f"connection to {self.describe()} failed: {exc.strerror or exc}", self.address)
            completed.extend(self._break(error))
        return completed

    def earliest_deadline(self) -> float | None:
        """The soonest deadline among the requests in flight, if any."""
        return min((request.deadline for request in self._in_flight), default=None)

    def expire(self, now: float) -> list[InFlightRequest]:
        """Break the connection if a request on it has passed its deadline.

        Responses come strictly in order, so one overdue request cannot be
        dropped alone: the connection goes, and every request on it fails.
        """
        overdue = next((request for request in self._in_flight if request.deadline <= now), None)
        if overdue is None:
            return []
        timeout = KafkaTimeoutError(f"{self.describe()} did not answer {overdue.api_key.name} in time")
        return self._break(timeout, overdue)

    def _break(self, error: BaseException, culprit: InFlightRequest | None = None) -> list[InFlightRequest]:
        """Close the socket and fail every request on it; ``culprit`` gets ``error`` itself."""
        failed = list(self._in_flight)
        self._in_flight.clear()
        lost = NetworkError(f"connection to {self.describe()} was closed: {error}", self.address)
        for request in failed:
            request.fail(error if request is culprit or culprit is None else lost)
        if culprit is not None and culprit not in failed and not culprit.done:
            culprit.fail(error)
        self._close_socket()
        return failed

    def close(self) -> list[InFlightRequest]:
        """Close the connection; requests still in flight fail with NetworkError."""
        return self._break(NetworkError(f"connection to {self.describe()} closed by the client", self.address))

    def _close_socket(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
        self._sock = None
        self._protocol = None
