"""Sans-IO Kafka connections: bytes in, requests/responses out, and back.

The server side::

    conn = ServerConnection(max_request_size=104857600)
    conn.receive_data(data_from_socket)
    while (request := conn.next_request()) is not None:
        ...                                   # dispatch request.body
        if request.expects_response:
            parts = conn.encode_response_parts(request.header.correlation_id,
                                               request.api_key, request.api_version, body)

``next_request`` raises (all subclasses of :class:`InvalidRequestError`):

* :class:`FrameTooLargeError` for a size prefix outside ``0..max_request_size``;
  the stream is unusable afterwards and every later call raises again;
* :class:`UnsupportedVersionError` for a well-framed request whose API or
  version is not served; its frame is consumed and ``exc.header`` says what
  was asked. ApiVersions gets :meth:`ServerConnection.encode_unsupported_version`;
  for anything else, close the connection;
* :class:`InvalidRequestError` for a frame whose header or body does not parse;
  its frame is consumed and ``exc.header`` is set when the header was readable.

Nothing here touches sockets, files, clocks or asyncio. Responses must go out
in request order; the caller owns that ordering (and skips Produce with
``acks=0``, which gets no response).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import (
    ErrorCode,
    InvalidRequestError,
    ProtocolDecodeError,
    ProtocolUsageError,
    UnsupportedVersionError,
)
from spate.protocol.framing import (
    DEFAULT_INLINE_LIMIT,
    DEFAULT_MAX_REQUEST_SIZE,
    MAX_FRAME_SIZE,
    FramePart,
    FrameReader,
    encode_frame,
    encode_frame_parts,
)
from spate.protocol.headers import (
    RequestHeader,
    decode_request_header,
    decode_request_prefix,
    decode_response_header,
    encode_request_header,
    encode_response_header,
    request_header_version,
    response_header_version,
)
from spate.protocol.messages import request_schema, response_schema
from spate.protocol.messages.api_versions import ApiVersionsResponse, api_versions_response
from spate.protocol.schema import MessageSchema
from spate.protocol.versions import ADVERTISED_VERSIONS, VersionRange

_CORRELATION_ID_LIMIT = 1 << 31


@dataclass(frozen=True, slots=True)
class Request:
    """One decoded request. ``size`` is the frame's payload size in bytes;
    ``client_host`` is the peer's address as the transport reported it;
    ``principal`` who the server knows the peer to be (``User:alice``), empty when unknown."""

    header: RequestHeader
    body: Any
    api_key: ApiKey
    api_version: int
    size: int
    client_host: str = ""
    principal: str = ""

    @property
    def expects_response(self) -> bool:
        return expects_response(self.api_key, self.body)


@dataclass(frozen=True, slots=True)
class Response:
    """One decoded response, matched to the request it answers."""

    correlation_id: int
    body: Any
    api_key: ApiKey
    api_version: int
    size: int


def expects_response(api_key: int, body: Any) -> bool:
    """Every request is answered except Produce with ``acks=0``."""
    return not (api_key == ApiKey.PRODUCE and body.acks == 0)


def _declared(schema: MessageSchema | None, api_key: int, api_version: int, kind: str) -> MessageSchema:
    if schema is None or api_version not in schema.versions:
        raise ProtocolUsageError(f"no {kind} declared for {ApiKey.name_of(api_key)} v{api_version}")
    return schema


# --- server side -----------------------------------------------------------------------------


def encode_response(correlation_id: int, api_key: int, api_version: int, body: Any) -> bytes:
    """A complete size-prefixed response frame."""
    return encode_frame(_response_writer(correlation_id, api_key, api_version, body))


def encode_response_parts(
    correlation_id: int, api_key: int, api_version: int, body: Any, inline_limit: int = DEFAULT_INLINE_LIMIT
) -> list[FramePart]:
    """A response frame as parts, records given as file ranges left out of line.

    The first part starts with the size prefix, which counts every part.
    """
    return encode_frame_parts(_response_writer(correlation_id, api_key, api_version, body), inline_limit)


def _response_writer(correlation_id: int, api_key: int, api_version: int, body: Any) -> Any:
    schema = _declared(response_schema(api_key), api_key, api_version, "response")
    header_version = response_header_version(api_key, api_version)

    def write(buf: bytearray) -> None:
        encode_response_header(buf, correlation_id, header_version)
        schema.encode_into(buf, body, api_version)

    return write


def _client_id_if_readable(mv: memoryview) -> str | None:
    """Best effort, for logging a request that will not be decoded (header v0 has no client id)."""
    try:
        return decode_request_header(mv, 1)[0].client_id
    except ProtocolDecodeError:
        return None


class ServerConnection:
    """The broker's view of one client connection."""

    def __init__(
        self,
        *,
        max_request_size: int = DEFAULT_MAX_REQUEST_SIZE,
        versions: Mapping[ApiKey, VersionRange] = ADVERTISED_VERSIONS,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
        client_host: str = "",
    ) -> None:
        self.client_host = client_host
        # Set by the server once it knows who the peer is; stamped on each request for authorization.
        self.principal = ""
        self._served = {int(key): span for key, span in versions.items()}
        self._schemas: dict[int, MessageSchema] = {}
        for key, span in versions.items():
            schema = request_schema(key)
            if schema is None or span.min < schema.versions.min or span.max > schema.versions.max:
                raise ProtocolUsageError(f"{ApiKey.name_of(key)} {span} is not declared")
            self._schemas[int(key)] = schema
        self.versions = versions
        self.inline_limit = inline_limit
        self._frames = FrameReader(max_request_size)

    @property
    def buffered(self) -> int:
        """Bytes of an incomplete request still waiting for the rest."""
        return self._frames.buffered

    @property
    def pending_frame_size(self) -> int | None:
        """Payload size of the incomplete request being received, once its size prefix is in."""
        return self._frames.pending_frame_size

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        self._frames.receive_data(data)

    def limit_request_size(self, max_request_size: int) -> None:
        """Change the largest frame accepted from here on (SASL listeners take small ones before authentication)."""
        self._frames.max_frame_size = max_request_size

    def next_frame(self) -> bytes | None:
        """The next complete frame, undecoded (SASL tokens after SaslHandshake v0), or None until more bytes
        arrive."""
        return self._frames.next_frame()

    def next_request(self) -> Request | None:
        """The next complete request, or None until more bytes arrive."""
        frame = self._frames.next_frame()
        if frame is None:
            return None
        mv = memoryview(frame)
        try:
            api_key, api_version, correlation_id = decode_request_prefix(mv)
        except ProtocolDecodeError as exc:
            raise InvalidRequestError(str(exc)) from None
        span = self._served.get(api_key)
        if span is None or api_version not in span:
            raise UnsupportedVersionError(
                RequestHeader(api_key, api_version, correlation_id, _client_id_if_readable(mv))
            )
        schema = self._schemas[api_key]
        header = RequestHeader(api_key, api_version, correlation_id, None)
        try:
            header, pos = decode_request_header(mv, request_header_version(api_key, api_version))
            body, end = schema.decode_from(mv, pos, api_version)
        except ProtocolDecodeError as exc:
            raise InvalidRequestError(str(exc), header) from None
        if end != len(mv) and not _librdkafka_all_topics_metadata(api_key, api_version, body, len(mv) - end) \
                and not _librdkafka_scram_tags(api_key, mv[end:]):
            raise InvalidRequestError(f"{len(mv) - end} trailing bytes after {schema.name}", header)
        return Request(header, body, ApiKey(api_key), api_version, len(mv), self.client_host, self.principal)

    def encode_response(self, correlation_id: int, api_key: int, api_version: int, body: Any) -> bytes:
        return encode_response(correlation_id, api_key, api_version, body)

    def encode_response_parts(self, correlation_id: int, api_key: int, api_version: int, body: Any) -> list[FramePart]:
        return encode_response_parts(correlation_id, api_key, api_version, body, self.inline_limit)

    def encode_unsupported_version(self, correlation_id: int) -> bytes:
        """The reply to an ApiVersions request above the advertised range.

        Always version 0 with header v0, whatever version was asked for: error
        UNSUPPORTED_VERSION and the full table, so the client can retry at a
        version both sides know.
        """
        body = api_versions_response(self.versions, ErrorCode.UNSUPPORTED_VERSION)
        return encode_response(correlation_id, ApiKey.API_VERSIONS, 0, body)


# --- client side -----------------------------------------------------------------------------


def encode_request(api_key: int, api_version: int, correlation_id: int, client_id: str | None, body: Any) -> bytes:
    """A complete size-prefixed request frame."""
    return encode_frame(_request_writer(api_key, api_version, correlation_id, client_id, body))


def encode_request_parts(
    api_key: int, api_version: int, correlation_id: int, client_id: str | None, body: Any
) -> list[FramePart]:
    """A request frame as parts: records of ``DEFAULT_INLINE_LIMIT`` bytes or more are not copied.

    For a scatter-gather write (``socket.sendmsg``): a Produce request of
    large batches goes out without its records being copied into a frame.
    """
    return encode_frame_parts(_request_writer(api_key, api_version, correlation_id, client_id, body))


def _request_writer(
    api_key: int, api_version: int, correlation_id: int, client_id: str | None, body: Any
) -> Callable[[bytearray], None]:
    schema = _declared(request_schema(api_key), api_key, api_version, "request")
    header_version = request_header_version(api_key, api_version)
    header = RequestHeader(api_key, api_version, correlation_id, client_id, header_version)

    def write(buf: bytearray) -> None:
        encode_request_header(buf, header)
        schema.encode_into(buf, body, api_version)

    return write


# librdkafka reserves an int32 for the topic count of a Metadata request and, asking for all topics
# at v9+, leaves it as written: a compact null (0) followed by three zero bytes, so its own fields
# end three bytes past where Kafka's parser stops. Kafka ignores bytes after a request body; Spate
# ignores exactly these (the fields it misses only matter when topics are named).
_LIBRDKAFKA_METADATA_SLACK = 3
_FLEXIBLE_METADATA_FROM_VERSION = 9


def _librdkafka_all_topics_metadata(api_key: int, api_version: int, body: Any, trailing: int) -> bool:
    return (
        api_key == ApiKey.METADATA
        and api_version >= _FLEXIBLE_METADATA_FROM_VERSION
        and body.topics is None
        and trailing == _LIBRDKAFKA_METADATA_SLACK
    )


def _librdkafka_scram_tags(api_key: int, trailing: memoryview) -> bool:
    """librdkafka ends an AlterUserScramCredentials request with a second empty tagged-field buffer (its
    request builder writes one, and so does its flexible-request framing); Kafka ignores it."""
    return api_key == ApiKey.ALTER_USER_SCRAM_CREDENTIALS and bytes(trailing) == b"\x00"


def decode_response(api_key: int, api_version: int, frame: bytes | bytearray | memoryview) -> Response:
    """Decode a response payload (the bytes after the size prefix).

    A broker that does not support the ApiVersions version asked for answers
    in version 0 format; such a reply is decoded as v0 and returned with
    ``api_version`` 0 so the caller sees its UNSUPPORTED_VERSION error code.
    """
    schema = _declared(response_schema(api_key), api_key, api_version, "response")
    mv = memoryview(frame)
    correlation_id, pos = decode_response_header(mv, response_header_version(api_key, api_version))
    try:
        body, end = schema.decode_from(mv, pos, api_version)
        if end != len(mv):
            raise ProtocolDecodeError(f"{schema.name} v{api_version}: {len(mv) - end} trailing bytes")
    except ProtocolDecodeError:
        if api_key != ApiKey.API_VERSIONS or api_version == 0:
            raise
        fallback = _unsupported_api_versions(mv[pos:])
        if fallback is None:
            raise
        return Response(correlation_id, fallback, ApiKey.API_VERSIONS, 0, len(mv))
    return Response(correlation_id, body, ApiKey(api_key), api_version, len(mv))


def _unsupported_api_versions(payload: memoryview) -> Any:
    """The v0-format UNSUPPORTED_VERSION reply in ``payload``, if that is what it is."""
    try:
        body = ApiVersionsResponse.SCHEMA.decode(payload, 0)
    except ProtocolDecodeError:
        return None
    return body if body.error_code == ErrorCode.UNSUPPORTED_VERSION else None


@dataclass(frozen=True, slots=True)
class _Pending:
    correlation_id: int
    api_key: int
    api_version: int


class ClientConnection:
    """Spate's client view of one broker connection.

    Assigns correlation ids, remembers which requests await a response, and
    matches responses to them in order (Kafka answers strictly in order).
    """

    def __init__(
        self,
        client_id: str | None,
        *,
        max_response_size: int = MAX_FRAME_SIZE,
        first_correlation_id: int = 0,
    ) -> None:
        self.client_id = client_id
        self._next_correlation_id = first_correlation_id % _CORRELATION_ID_LIMIT
        self._pending: list[_Pending] = []
        self._frames = FrameReader(max_response_size)

    @property
    def in_flight(self) -> int:
        """Requests sent whose responses have not been returned yet."""
        return len(self._pending)

    def send_request(self, api_key: int, api_version: int, body: Any) -> tuple[int, bytes]:
        """``(correlation_id, frame)`` for a request; the frame is for the socket."""
        correlation_id = self._next_correlation_id
        frame = encode_request(api_key, api_version, correlation_id, self.client_id, body)
        self._expect(correlation_id, api_key, api_version, body)
        return correlation_id, frame

    def send_request_parts(self, api_key: int, api_version: int, body: Any) -> tuple[int, list[FramePart]]:
        """``send_request`` with the frame as parts (see :func:`encode_request_parts`)."""
        correlation_id = self._next_correlation_id
        parts = encode_request_parts(api_key, api_version, correlation_id, self.client_id, body)
        self._expect(correlation_id, api_key, api_version, body)
        return correlation_id, parts

    def _expect(self, correlation_id: int, api_key: int, api_version: int, body: Any) -> None:
        """Count the request as sent: the next correlation id, and its response awaited if any."""
        self._next_correlation_id = (correlation_id + 1) % _CORRELATION_ID_LIMIT
        if expects_response(api_key, body):
            self._pending.append(_Pending(correlation_id, api_key, api_version))

    @property
    def pending_frame_size(self) -> int | None:
        """Payload size of the incomplete request being received, once its size prefix is in."""
        return self._frames.pending_frame_size

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        self._frames.receive_data(data)

    def next_response(self) -> Response | None:
        """The next complete response, or None until more bytes arrive.

        Raises ProtocolDecodeError for a response nobody asked for, one whose
        correlation id is out of order, or one that does not parse.
        """
        frame = self._frames.next_frame()
        if frame is None:
            return None
        return self.response_from_frame(frame)

    def response_from_frame(self, frame: bytes) -> Response:
        """The response in ``frame`` (a payload without its size prefix) read off the socket by the caller:
        ``next_response`` without buffering, for callers that read whole frames themselves."""
        if not self._pending:
            raise ProtocolDecodeError("response received with no request in flight")
        pending = self._pending.pop(0)
        response = decode_response(pending.api_key, pending.api_version, frame)
        if response.correlation_id != pending.correlation_id:
            raise ProtocolDecodeError(
                f"correlation id {response.correlation_id} does not match the oldest request "
                f"({pending.correlation_id})"
            )
        return response
