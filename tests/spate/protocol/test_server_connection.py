"""The sans-IO server connection: framing, header handling, refusals, responses."""

from __future__ import annotations

import struct

import pytest

from spate.protocol import (
    ADVERTISED_VERSIONS,
    ApiKey,
    ErrorCode,
    FileRangeRef,
    FrameTooLargeError,
    InvalidRequestError,
    ProtocolUsageError,
    ServerConnection,
    UnsupportedVersionError,
    VersionRange,
    decode_response,
    encode_request,
    encode_response_parts,
    frame_length,
)
from spate.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from spate.protocol.messages.fetch import FetchResponse
from spate.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from spate.protocol.messages.metadata import MetadataRequest
from spate.protocol.messages.produce import ProduceRequest


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def heartbeat_frame(correlation_id: int = 7, version: int = 3) -> bytes:
    return encode_request(ApiKey.HEARTBEAT, version, correlation_id, "client-1", HeartbeatRequest("g", 1, "m"))


def test_a_request_split_across_reads_is_returned_once_complete() -> None:
    conn = ServerConnection()
    data = heartbeat_frame()
    for byte in data[:-1]:
        conn.receive_data(bytes([byte]))
        assert conn.next_request() is None
    conn.receive_data(data[-1:])
    request = conn.next_request()
    assert request is not None
    assert (request.api_key, request.api_version, request.size) == (ApiKey.HEARTBEAT, 3, len(data) - 4)
    assert request.header.correlation_id == 7 and request.header.client_id == "client-1"
    assert request.body == HeartbeatRequest("g", 1, "m")
    assert conn.next_request() is None and conn.buffered == 0


def test_the_pending_frame_size_is_known_once_the_size_prefix_is_in() -> None:
    conn = ServerConnection()
    data = heartbeat_frame() + heartbeat_frame(correlation_id=8)
    conn.receive_data(data[:3])
    assert conn.pending_frame_size is None
    conn.receive_data(data[3:10])
    assert conn.next_request() is None
    assert conn.pending_frame_size == len(heartbeat_frame()) - 4
    conn.receive_data(data[10:])
    assert conn.next_request() is not None and conn.next_request() is not None
    assert conn.pending_frame_size is None


def test_pipelined_requests_in_one_read_come_out_in_order() -> None:
    conn = ServerConnection()
    conn.receive_data(b"".join(heartbeat_frame(correlation_id=i) for i in range(5)))
    ids = []
    while (request := conn.next_request()) is not None:
        ids.append(request.header.correlation_id)
    assert ids == [0, 1, 2, 3, 4]


def test_a_declared_size_above_the_limit_is_refused_from_the_prefix_alone() -> None:
    conn = ServerConnection(max_request_size=1000)
    conn.receive_data(struct.pack(">i", 1001))
    with pytest.raises(FrameTooLargeError) as raised:
        conn.next_request()
    assert (raised.value.size, raised.value.limit) == (1001, 1000)
    assert raised.value.error_code == ErrorCode.INVALID_REQUEST


def test_a_negative_size_is_refused() -> None:
    conn = ServerConnection()
    conn.receive_data(struct.pack(">i", -5))
    with pytest.raises(FrameTooLargeError):
        conn.next_request()


def test_after_a_framing_error_the_connection_stays_refused() -> None:
    conn = ServerConnection(max_request_size=10)
    conn.receive_data(struct.pack(">i", 2**31 - 1))
    with pytest.raises(FrameTooLargeError):
        conn.next_request()
    conn.receive_data(heartbeat_frame())
    with pytest.raises(FrameTooLargeError):
        conn.next_request()


def test_an_api_versions_request_above_the_range_gets_the_v0_refusal_and_the_stream_continues() -> None:
    served = {**ADVERTISED_VERSIONS, ApiKey.API_VERSIONS: VersionRange(0, 2)}
    conn = ServerConnection(versions=served)
    conn.receive_data(encode_request(ApiKey.API_VERSIONS, 3, 11, "rdkafka", ApiVersionsRequest("c", "1")))
    conn.receive_data(heartbeat_frame(correlation_id=12))
    with pytest.raises(UnsupportedVersionError) as raised:
        conn.next_request()
    header = raised.value.header
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (18, 3, 11, "rdkafka")
    reply = conn.encode_unsupported_version(header.correlation_id)
    # Header v0 (correlation id only), then an ApiVersions v0 body: error 35 and the full table.
    assert reply[4:8] == struct.pack(">i", 11)
    body = ApiVersionsResponse.decode(reply[8:], 0)
    assert body.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert {k.api_key: (k.min_version, k.max_version) for k in body.api_keys} == {
        int(key): tuple(span) for key, span in served.items()
    }
    next_request = conn.next_request()
    assert next_request is not None and next_request.header.correlation_id == 12


def test_an_unknown_api_key_is_refused_with_its_header() -> None:
    conn = ServerConnection()
    conn.receive_data(frame(struct.pack(">hhi", 999, 0, 5) + struct.pack(">h", 1) + b"x"))
    with pytest.raises(UnsupportedVersionError) as raised:
        conn.next_request()
    assert raised.value.header.api_key == 999 and raised.value.header.correlation_id == 5
    assert raised.value.header.api_name == "API_KEY_999"


def test_a_sasl_handshake_decodes_and_raw_tokens_after_it_come_out_as_frames() -> None:
    conn = ServerConnection()
    header = struct.pack(">hhih", ApiKey.SASL_HANDSHAKE, 0, 5, -1)
    conn.receive_data(frame(header + struct.pack(">h", 5) + b"PLAIN") + frame(b"\x00alice\x00secret"))
    request = conn.next_request()
    assert request is not None and request.body.mechanism == "PLAIN"
    assert conn.next_frame() == b"\x00alice\x00secret"
    assert conn.next_frame() is None


def test_a_header_shorter_than_its_fixed_prefix_is_an_invalid_request() -> None:
    conn = ServerConnection()
    conn.receive_data(frame(b"\x00\x03\x00"))
    with pytest.raises(InvalidRequestError) as raised:
        conn.next_request()
    assert raised.value.header is None


def test_a_malformed_body_is_an_invalid_request_carrying_the_header() -> None:
    conn = ServerConnection()
    conn.receive_data(frame(heartbeat_frame(correlation_id=9)[4:-3]))
    with pytest.raises(InvalidRequestError) as raised:
        conn.next_request()
    assert raised.value.header is not None and raised.value.header.correlation_id == 9
    assert not isinstance(raised.value, UnsupportedVersionError)


def test_trailing_bytes_after_a_request_body_are_an_invalid_request() -> None:
    conn = ServerConnection()
    conn.receive_data(frame(heartbeat_frame()[4:] + b"\x00"))
    with pytest.raises(InvalidRequestError, match="trailing"):
        conn.next_request()


def test_a_flexible_request_header_skips_its_tagged_fields() -> None:
    served = {**ADVERTISED_VERSIONS, ApiKey.API_VERSIONS: VersionRange(0, 3)}
    conn = ServerConnection(versions=served)
    payload = struct.pack(">hhi", 18, 3, 4) + struct.pack(">h", 2) + b"id" + bytes.fromhex("01" "00" "01" "ff")
    conn.receive_data(frame(payload + bytes.fromhex("026e" "0231" "00")))
    request = conn.next_request()
    assert request is not None and request.header.version == 2 and request.header.client_id == "id"
    assert request.body == ApiVersionsRequest("n", "1")


def test_a_served_range_beyond_the_declarations_is_a_usage_error() -> None:
    with pytest.raises(ProtocolUsageError):
        ServerConnection(versions={ApiKey.METADATA: VersionRange(0, 13)})


def test_produce_with_acks_zero_expects_no_response() -> None:
    conn = ServerConnection()
    for acks, expected in [(0, False), (1, True), (-1, True)]:
        conn.receive_data(encode_request(ApiKey.PRODUCE, 7, 1, None, ProduceRequest(acks=acks)))
        request = conn.next_request()
        assert request is not None and request.expects_response is expected
        assert request.header.client_id is None


def test_produce_records_arrive_as_a_view_into_the_request_frame() -> None:
    conn = ServerConnection()
    batch = b"\x01" * 70
    partition = ProduceRequest.PartitionProduceData(index=0, records=batch)
    body = ProduceRequest(acks=1, topic_data=[ProduceRequest.TopicProduceData("t", [partition])])
    conn.receive_data(encode_request(ApiKey.PRODUCE, 7, 1, "c", body))
    request = conn.next_request()
    records = request.body.topic_data[0].partition_data[0].records
    assert isinstance(records, memoryview) and records == batch


def test_responses_use_header_v0_and_carry_the_correlation_id() -> None:
    conn = ServerConnection()
    out = conn.encode_response(77, ApiKey.HEARTBEAT, 3, HeartbeatResponse(throttle_time_ms=1, error_code=27))
    assert out == frame(struct.pack(">i", 77) + struct.pack(">ih", 1, 27))
    assert decode_response(ApiKey.HEARTBEAT, 3, out[4:]).body == HeartbeatResponse(1, 27)


def test_encoding_a_response_at_an_undeclared_version_is_a_usage_error() -> None:
    with pytest.raises(ProtocolUsageError):
        ServerConnection().encode_response(1, ApiKey.HEARTBEAT, 9, HeartbeatResponse())


def fetch_body(records_0: object, records_1: object) -> FetchResponse:
    return FetchResponse(
        responses=[
            FetchResponse.FetchableTopicResponse(
                topic="orders",
                partitions=[
                    FetchResponse.PartitionData(partition_index=0, high_watermark=10, records=records_0),
                    FetchResponse.PartitionData(partition_index=1, high_watermark=20, records=records_1),
                ],
            )
        ]
    )


def test_fetch_response_parts_leave_file_ranges_for_sendfile_and_count_them_in_the_size() -> None:
    segment_range = FileRangeRef(size=5000, payload=("00000000000000000000.log", 4096))
    parts = encode_response_parts(3, ApiKey.FETCH, 11, fetch_body(segment_range, b"inline-records"))
    assert parts[1] is segment_range
    assert all(isinstance(part, bytes) for i, part in enumerate(parts) if i != 1)
    declared = struct.unpack(">i", parts[0][:4])[0]
    assert declared + 4 == frame_length(parts)


def test_fetch_response_parts_match_the_contiguous_encoding_byte_for_byte() -> None:
    records = bytes(range(256)) * 100  # above the inline limit, so it becomes its own part
    contiguous = ServerConnection().encode_response(3, ApiKey.FETCH, 11, fetch_body(records, None))
    parts = ServerConnection().encode_response_parts(3, ApiKey.FETCH, 11, fetch_body(records, None))
    assert any(part is records for part in parts)
    assert b"".join(parts) == contiguous  # type: ignore[arg-type]
    decoded = decode_response(ApiKey.FETCH, 11, contiguous[4:]).body
    assert decoded.responses[0].partitions[0].records == records
    assert decoded.responses[0].partitions[1].records is None


def test_metadata_request_v0_and_v1_mean_all_topics_differently() -> None:
    conn = ServerConnection()
    conn.receive_data(encode_request(ApiKey.METADATA, 0, 1, "c", MetadataRequest(topics=[])))
    conn.receive_data(encode_request(ApiKey.METADATA, 1, 2, "c", MetadataRequest(topics=None)))
    assert conn.next_request().body.topics == []
    assert conn.next_request().body.topics is None
