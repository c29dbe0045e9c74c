"""OffsetDelete v0 (API key 47): pinned bytes both ways, and registration in the API tables."""

from __future__ import annotations

import struct

import pytest

from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import (
    ClientConnection,
    ServerConnection,
    encode_response,
)
from spate.protocol.messages import REQUESTS, RESPONSES
from spate.protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteResponse,
)
from spate.protocol.versions import ADVERTISED_VERSIONS, VersionRange

Req, Resp = OffsetDeleteRequest, OffsetDeleteResponse


def i16(v: int) -> str:
    return struct.pack(">h", v).hex()


def i32(v: int) -> str:
    return struct.pack(">i", v).hex()


def s(text: str) -> str:
    return i16(len(text.encode())) + text.encode().hex()


REQUEST = Req(
    group_id="g",
    topics=[Req.OffsetDeleteRequestTopic("t", [Req.OffsetDeleteRequestPartition(0), Req.OffsetDeleteRequestPartition(3)])],
)
REQUEST_HEX = s("g") + i32(1) + s("t") + i32(2) + i32(0) + i32(3)

RESPONSE = Resp(
    error_code=0,
    throttle_time_ms=7,
    topics=[Resp.OffsetDeleteResponseTopic("t", [Resp.OffsetDeleteResponsePartition(partition_index=3, error_code=86)])],
)
# Kafka puts the group-level error before the throttle time in this response.
RESPONSE_HEX = i16(0) + i32(7) + i32(1) + s("t") + i32(1) + i32(3) + i16(86)

TABLE = [
    pytest.param(Req, REQUEST, REQUEST_HEX, id="request"),
    pytest.param(Resp, RESPONSE, RESPONSE_HEX, id="response"),
]


@pytest.mark.parametrize(("cls", "value", "hex_bytes"), TABLE)
def test_offset_delete_v0_encodes_to_kafkas_bytes(cls, value, hex_bytes) -> None:
    assert value.encode(0).hex() == hex_bytes


@pytest.mark.parametrize(("cls", "value", "hex_bytes"), TABLE)
def test_offset_delete_v0_decodes_from_kafkas_bytes(cls, value, hex_bytes) -> None:
    assert cls.decode(bytes.fromhex(hex_bytes), 0) == value


def test_offset_delete_is_registered_and_advertised_as_version_zero_only() -> None:
    assert REQUESTS[ApiKey.OFFSET_DELETE] is Req.SCHEMA
    assert RESPONSES[ApiKey.OFFSET_DELETE] is Resp.SCHEMA
    assert ADVERTISED_VERSIONS[ApiKey.OFFSET_DELETE] == VersionRange(0, 0)


def test_offset_delete_request_round_trips_through_client_and_server_connections() -> None:
    client = ClientConnection(client_id="admin")
    correlation_id, frame = client.send_request(ApiKey.OFFSET_DELETE, 0, REQUEST)
    server = ServerConnection(max_request_size=1 << 20)
    server.receive_data(frame)
    request = server.next_request()
    assert request is not None and request.api_key == ApiKey.OFFSET_DELETE and request.body == REQUEST

    client.receive_data(encode_response(correlation_id, ApiKey.OFFSET_DELETE, 0, RESPONSE))
    response = client.next_response()
    assert response is not None and response.body == RESPONSE
