"""Request and response headers.

Request header layouts (after the frame's int32 size)::

    v0: api_key int16, api_version int16, correlation_id int32
                                      (ControlledShutdown v0 only)
    v1: v0 + client_id nullable string (int16 length, -1 = null)
    v2: v1 + tagged fields            (flexible request versions)

``client_id`` keeps its int16 length even in v2. The first eight bytes are the
same in every version, which is what lets a server answer (or refuse) a
request for an API or version it does not know.

Response header layouts::

    v0: correlation_id int32
    v1: v0 + tagged fields            (flexible response versions)

ApiVersions responses always use v0, so that a client that does not yet know
the broker's versions can read the reply.
"""

from __future__ import annotations

import struct

from spate.protocol import types as t
from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ProtocolDecodeError
from spate.protocol.messages import request_schema, response_schema
from spate.protocol.request_header import RequestHeader

_PREFIX = struct.Struct(">hhi")
_CORRELATION_ID = struct.Struct(">i")


def request_header_version(api_key: int, api_version: int) -> int:
    """2 for flexible request versions, 0 for ControlledShutdown v0 (Kafka's one header without a client id), else 1."""
    if api_key == ApiKey.CONTROLLED_SHUTDOWN and api_version == 0:
        return 0
    schema = request_schema(api_key)
    return 2 if schema is not None and schema.is_flexible(api_version) else 1


def response_header_version(api_key: int, api_version: int) -> int:
    """1 for flexible response versions except ApiVersions, else 0."""
    if api_key == ApiKey.API_VERSIONS:
        return 0
    schema = response_schema(api_key)
    return 1 if schema is not None and schema.is_flexible(api_version) else 0


def decode_request_prefix(mv: memoryview) -> tuple[int, int, int]:
    """``(api_key, api_version, correlation_id)``: the part every header version shares."""
    try:
        return _PREFIX.unpack_from(mv, 0)  # type: ignore[return-value]
    except struct.error:
        raise ProtocolDecodeError(f"request header needs 8 bytes, frame has {len(mv)}") from None


def decode_request_header(mv: memoryview, header_version: int | None = None) -> tuple[RequestHeader, int]:
    """Read a request header from the start of a frame.

    With ``header_version`` None the version follows from the API key and
    version in the frame (undeclared APIs read as v1). Returns the header and
    the offset of the body.
    """
    api_key, api_version, correlation_id = decode_request_prefix(mv)
    if header_version is None:
        header_version = request_header_version(api_key, api_version)
    if header_version == 0:
        return RequestHeader(api_key, api_version, correlation_id, None, 0), _PREFIX.size
    client_id, pos = t.NULLABLE_STRING.decode(mv, _PREFIX.size)
    if header_version >= 2:
        pos = t.skip_tagged_fields(mv, pos)
    return RequestHeader(api_key, api_version, correlation_id, client_id, header_version), pos


def encode_request_header(buf: bytearray, header: RequestHeader) -> None:
    buf += _PREFIX.pack(header.api_key, header.api_version, header.correlation_id)
    if header.version == 0:
        return
    t.NULLABLE_STRING.encode(buf, header.client_id)
    if header.version >= 2:
        buf += t.EMPTY_TAGGED_FIELDS


def encode_response_header(buf: bytearray, correlation_id: int, header_version: int) -> None:
    buf += _CORRELATION_ID.pack(correlation_id)
    if header_version >= 1:
        buf += t.EMPTY_TAGGED_FIELDS


def decode_response_header(mv: memoryview, header_version: int) -> tuple[int, int]:
    """``(correlation_id, body offset)`` of a response frame."""
    correlation_id, pos = t.INT32.decode(mv, 0)
    if header_version >= 1:
        pos = t.skip_tagged_fields(mv, pos)
    return correlation_id, pos
