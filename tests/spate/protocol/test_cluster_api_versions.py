"""The cluster APIs' advertised ranges, and their requests and replies through the sans-IO connection."""

from __future__ import annotations

import pytest
from kafka.protocol.admin import DescribeClusterRequest as KpDescribeClusterRequest
from kafka.protocol.admin import DescribeClusterResponse as KpDescribeClusterResponse

from spate.protocol import (
    ADVERTISED_VERSIONS,
    REQUESTS,
    RESPONSES,
    ApiKey,
    ServerConnection,
    UnsupportedVersionError,
    VersionRange,
    decode_response,
    encode_request,
    encode_response,
)
from spate.protocol.headers import decode_request_header
from spate.protocol.messages.api_versions import ApiVersionsResponse, api_versions_response
from spate.protocol.messages.controlled_shutdown import ControlledShutdownRequest
from spate.protocol.messages.describe_cluster import DescribeClusterRequest, DescribeClusterResponse
from tests.spate.protocol.wire_hex import TAGS, boolean, carr, cs, i16, i32, s

CLUSTER_RANGES = {
    ApiKey.LEADER_AND_ISR: VersionRange(0, 5),
    ApiKey.STOP_REPLICA: VersionRange(0, 3),
    ApiKey.UPDATE_METADATA: VersionRange(0, 7),
    ApiKey.CONTROLLED_SHUTDOWN: VersionRange(0, 3),
    ApiKey.WRITE_TXN_MARKERS: VersionRange(0, 1),
    ApiKey.ELECT_LEADERS: VersionRange(0, 2),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: VersionRange(0, 1),
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: VersionRange(0, 0),
    ApiKey.LIST_PARTITION_REASSIGNMENTS: VersionRange(0, 0),
    ApiKey.DESCRIBE_CLUSTER: VersionRange(0, 1),
}


def test_each_cluster_api_is_advertised_over_its_full_declared_range() -> None:
    for key, span in CLUSTER_RANGES.items():
        assert ADVERTISED_VERSIONS[key] == span, key.name
        assert REQUESTS[key].versions == span and RESPONSES[key].versions == span, key.name


@pytest.mark.parametrize("version", [0, 1, 2])
def test_api_versions_reply_lists_each_cluster_range(version: int) -> None:
    sent = api_versions_response(ADVERTISED_VERSIONS).encode(version)
    listed = {entry.api_key: (entry.min_version, entry.max_version) for entry in
              ApiVersionsResponse.decode(sent, version).api_keys}  # fmt: skip
    for key, span in CLUSTER_RANGES.items():
        assert listed[key] == (span.min, span.max), key.name


def test_the_unsupported_version_reply_lists_each_cluster_range_too() -> None:
    frame = ServerConnection().encode_unsupported_version(correlation_id=9)
    body = decode_response(ApiKey.API_VERSIONS, 0, frame[4:]).body
    listed = {entry.api_key: (entry.min_version, entry.max_version) for entry in body.api_keys}
    for key, span in CLUSTER_RANGES.items():
        assert listed[key] == (span.min, span.max), key.name


@pytest.mark.parametrize("key", list(CLUSTER_RANGES))
def test_the_server_connection_accepts_every_advertised_version(key: ApiKey) -> None:
    schema = REQUESTS[key]
    for version in range(1 if key == ApiKey.CONTROLLED_SHUTDOWN else 0, schema.versions.max + 1):
        body = schema.classes[schema.name]()
        conn = ServerConnection()
        conn.receive_data(encode_request(key, version, 5, "broker-1", body))
        request = conn.next_request()
        assert request is not None
        assert (request.api_key, request.api_version, request.header.client_id) == (key, version, "broker-1")
        assert request.header.version == (2 if schema.is_flexible(version) else 1)
        assert request.body == body


@pytest.mark.parametrize("key", list(CLUSTER_RANGES))
def test_a_version_above_the_range_is_refused(key: ApiKey) -> None:
    # api_key, api_version, correlation_id, client_id: nothing past the header is read.
    payload = i16(key) + i16(CLUSTER_RANGES[key].max + 1) + i32(5) + s("c")
    conn = ServerConnection()
    conn.receive_data(bytes.fromhex(i32(len(payload) // 2) + payload))
    with pytest.raises(UnsupportedVersionError) as refused:
        conn.next_request()
    assert refused.value.header.api_key == key


def test_a_flexible_request_frame_carries_header_v2() -> None:
    frame = encode_request(ApiKey.DESCRIBE_CLUSTER, 0, 7, "c", DescribeClusterRequest(True))
    # api_key, api_version, correlation_id, client_id (int16 length even in v2), header tags,
    # include_cluster_authorized_operations, body tags
    payload = i16(60) + i16(0) + i32(7) + s("c") + TAGS + boolean(True) + TAGS
    assert frame.hex() == i32(len(payload) // 2) + payload


def test_a_flexible_reply_frame_carries_header_v1() -> None:
    frame = encode_response(7, ApiKey.DESCRIBE_CLUSTER, 0, DescribeClusterResponse(cluster_id="c"))
    # correlation_id, header tags, then the body
    payload = i32(7) + TAGS + i32(0) + i16(0) + cs(None) + cs("c") + i32(-1) + carr(0) + i32(-(2**31)) + TAGS
    assert frame.hex() == i32(len(payload) // 2) + payload


@pytest.mark.parametrize("version", [0, 1])
def test_kafka_python_frames_describe_cluster_as_spate_does(version: int) -> None:
    """A whole request frame from kafka-python is served, and the reply frame reads back there."""
    kp_request = KpDescribeClusterRequest(include_cluster_authorized_operations=True, version=version)
    kp_request.with_header(correlation_id=11, client_id="kp-admin")
    conn = ServerConnection()
    conn.receive_data(kp_request.encode(header=True, framed=True))
    request = conn.next_request()
    assert request is not None
    assert (request.header.client_id, request.header.correlation_id) == ("kp-admin", 11)
    assert request.body == DescribeClusterRequest(include_cluster_authorized_operations=True)

    reply = DescribeClusterResponse(cluster_id="spate", controller_id=1,
                                    brokers=[DescribeClusterResponse.DescribeClusterBroker(1, "h", 9092, None)])
    frame = conn.encode_response(11, ApiKey.DESCRIBE_CLUSTER, version, reply)
    received = KpDescribeClusterResponse.decode(frame, version=version, header=True, framed=True)
    assert received.header.correlation_id == 11
    assert (received.cluster_id, received.controller_id) == ("spate", 1)
    assert [(b.broker_id, b.host, b.port, b.rack) for b in received.brokers] == [(1, "h", 9092, None)]


def test_controlled_shutdown_v0_is_read_with_the_header_kafka_uses() -> None:
    # Kafka sends ControlledShutdown v0 with request header v0: api_key, api_version, correlation_id only.
    mv = memoryview(bytes.fromhex(i16(7) + i16(0) + i32(3) + i32(2)))
    header, pos = decode_request_header(mv)
    assert ControlledShutdownRequest.decode(mv[pos:], 0) == ControlledShutdownRequest(broker_id=2)
