"""The Kafka wire protocol, sans-IO: declarations, codecs, framing, connections.

Nothing in this package imports sockets, files, clocks or asyncio. Message
classes live in ``spate.protocol.messages.<family>`` (``produce``,
``fetch``, ...); everything else a caller needs is re-exported here.
"""

from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import (
    ClientConnection,
    Request,
    Response,
    ServerConnection,
    decode_response,
    encode_request,
    encode_request_parts,
    encode_response,
    encode_response_parts,
    expects_response,
)
from spate.protocol.errors import (
    ErrorCode,
    FrameTooLargeError,
    InvalidRequestError,
    KafkaError,
    ProtocolDecodeError,
    ProtocolError,
    ProtocolUsageError,
    UnsupportedVersionError,
)
from spate.protocol.framing import DEFAULT_MAX_REQUEST_SIZE, FramePart, frame_length
from spate.protocol.headers import RequestHeader
from spate.protocol.messages import REQUESTS, RESPONSES, request_schema, response_schema
from spate.protocol.pre_encoded import PreEncoded
from spate.protocol.types import FileRangeRef
from spate.protocol.versions import ADVERTISED_VERSIONS, VersionRange

__all__ = [
    "ADVERTISED_VERSIONS",
    "DEFAULT_MAX_REQUEST_SIZE",
    "REQUESTS",
    "RESPONSES",
    "ApiKey",
    "ClientConnection",
    "ErrorCode",
    "FileRangeRef",
    "FramePart",
    "FrameTooLargeError",
    "InvalidRequestError",
    "KafkaError",
    "PreEncoded",
    "ProtocolDecodeError",
    "ProtocolError",
    "ProtocolUsageError",
    "Request",
    "RequestHeader",
    "Response",
    "ServerConnection",
    "UnsupportedVersionError",
    "VersionRange",
    "decode_response",
    "encode_request",
    "encode_request_parts",
    "encode_response",
    "encode_response_parts",
    "expects_response",
    "frame_length",
    "request_schema",
    "response_schema",
]
