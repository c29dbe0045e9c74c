"""The sans-IO client side: request framing and in-order response matching."""

from __future__ import annotations

import pytest

from spate.protocol import (
    ADVERTISED_VERSIONS,
    ApiKey,
    ClientConnection,
    ErrorCode,
    ProtocolDecodeError,
    ServerConnection,
    UnsupportedVersionError,
    VersionRange,
    decode_response,
    encode_request,
    encode_response,
)
from spate.protocol.errors import FrameTooLargeError
from spate.protocol.framing import payload_size
from spate.protocol.messages.api_versions import (
    ApiVersionsRequest,
    api_versions_response,
)
from spate.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from spate.protocol.messages.produce import ProduceRequest


def test_request_frames_carry_header_v1_for_non_flexible_versions() -> None:
    frame = encode_request(ApiKey.HEARTBEAT, 0, 258, "cid", HeartbeatRequest("g", 1, "m"))
    assert frame.hex().startswith("00000017" "000c" "0000" "00000102" "0003" + b"cid".hex())


def test_request_frames_carry_header_v2_for_flexible_versions() -> None:
    frame = encode_request(ApiKey.API_VERSIONS, 3, 1, "c", ApiVersionsRequest("n", "1"))
    assert frame[4:].hex() == "0012" "0003" "00000001" "0001" "63" "00" "026e" "0231" "00"


def test_responses_are_matched_to_requests_in_order() -> None:
    client = ClientConnection("c", first_correlation_id=5)
    server = ServerConnection()
    for _ in range(3):
        correlation_id, frame = client.send_request(ApiKey.HEARTBEAT, 3, HeartbeatRequest("g", 1, "m"))
        server.receive_data(frame)
    assert client.in_flight == 3
    while (request := server.next_request()) is not None:
        # Echo the correlation id in the error code so the pairing is visible.
        correlation_id = request.header.correlation_id
        body = HeartbeatResponse(error_code=correlation_id)
        client.receive_data(server.encode_response(correlation_id, request.api_key, request.api_version, body))
    got = []
    while (response := client.next_response()) is not None:
        got.append((response.correlation_id, response.body.error_code))
    assert got == [(5, 5), (6, 6), (7, 7)]
    assert client.in_flight == 0


def test_a_response_out_of_order_is_a_decode_error() -> None:
    client = ClientConnection("c")
    client.send_request(ApiKey.HEARTBEAT, 3, HeartbeatRequest())
    client.receive_data(encode_response(99, ApiKey.HEARTBEAT, 3, HeartbeatResponse()))
    with pytest.raises(ProtocolDecodeError, match="correlation id 99"):
        client.next_response()


def test_a_response_nobody_asked_for_is_a_decode_error() -> None:
    client = ClientConnection("c")
    client.receive_data(encode_response(0, ApiKey.HEARTBEAT, 3, HeartbeatResponse()))
    with pytest.raises(ProtocolDecodeError):
        client.next_response()


def test_produce_with_acks_zero_is_not_awaited() -> None:
    client = ClientConnection("c")
    client.send_request(ApiKey.PRODUCE, 7, ProduceRequest(acks=0))
    assert client.in_flight == 0
    first, _ = client.send_request(ApiKey.HEARTBEAT, 3, HeartbeatRequest())
    assert first == 1, "the unanswered produce still consumed a correlation id"


def test_correlation_ids_wrap_within_int32() -> None:
    client = ClientConnection("c", first_correlation_id=2**31 - 1)
    assert client.send_request(ApiKey.HEARTBEAT, 3, HeartbeatRequest())[0] == 2**31 - 1
    assert client.send_request(ApiKey.HEARTBEAT, 3, HeartbeatRequest())[0] == 0


def test_the_api_versions_refusal_is_read_as_v0_whatever_version_was_asked() -> None:
    # A broker serving ApiVersions up to v2 refuses the v3 request.
    server = ServerConnection(versions={**ADVERTISED_VERSIONS, ApiKey.API_VERSIONS: VersionRange(0, 2)})
    client = ClientConnection("c")
    _, frame = client.send_request(ApiKey.API_VERSIONS, 3, ApiVersionsRequest("spate", "0.1"))
    server.receive_data(frame)
    with pytest.raises(UnsupportedVersionError) as raised:
        server.next_request()
    client.receive_data(server.encode_unsupported_version(raised.value.header.correlation_id))
    response = client.next_response()
    assert response.api_version == 0
    assert response.body.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert max(k.max_version for k in response.body.api_keys if k.api_key == ApiKey.API_VERSIONS) == 2


def test_a_garbled_api_versions_reply_is_still_a_decode_error() -> None:
    reply = encode_response(1, ApiKey.API_VERSIONS, 2, api_versions_response(ADVERTISED_VERSIONS))
    with pytest.raises(ProtocolDecodeError):
        decode_response(ApiKey.API_VERSIONS, 2, reply[4:-2])


def test_a_caller_reading_whole_frames_hands_their_payloads_over_without_buffering() -> None:
    client = ClientConnection("c")
    server = ServerConnection()
    correlation_id, frame = client.send_request(ApiKey.HEARTBEAT, 3, HeartbeatRequest("g", 1, "m"))
    server.receive_data(frame)
    request = server.next_request()
    answer = server.encode_response(correlation_id, request.api_key, request.api_version, HeartbeatResponse(error_code=0))
    size = payload_size(answer[:4])
    assert size == len(answer) - 4
    response = client.response_from_frame(answer[4:])
    assert (response.correlation_id, client.in_flight) == (correlation_id, 0)


@pytest.mark.parametrize("prefix", [b"\xff\xff\xff\xff", (1025).to_bytes(4, "big")])
def test_a_frame_size_below_zero_or_above_the_limit_is_refused(prefix: bytes) -> None:
    with pytest.raises(FrameTooLargeError):
        payload_size(prefix, max_frame_size=1024)
