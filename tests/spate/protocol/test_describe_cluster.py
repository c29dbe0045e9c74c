"""DescribeCluster (API key 60): hand-built frames, nullable rules and kafka-python as an oracle.

Every version of DescribeCluster is flexible, so both golden frames use
compact strings and arrays and end each struct with a tagged-field section.
"""

from __future__ import annotations

import pytest
from kafka.protocol.admin import DescribeClusterRequest as KpDescribeClusterRequest
from kafka.protocol.admin import DescribeClusterResponse as KpDescribeClusterResponse

from spate.protocol.errors import ProtocolDecodeError, ProtocolUsageError
from spate.protocol.messages.describe_cluster import (
    ENDPOINT_TYPE_BROKERS,
    ENDPOINT_TYPE_CONTROLLERS,
    DescribeClusterRequest,
    DescribeClusterResponse,
)
from spate.protocol.messages.metadata import AUTHORIZED_OPERATIONS_OMITTED
from tests.spate.protocol.kafka_python_oracle import assert_request_agrees, assert_response_agrees
from tests.spate.protocol.wire_hex import TAGS, boolean, carr, cs, i8, i16, i32

VERSIONS = [0, 1]
Broker = DescribeClusterResponse.DescribeClusterBroker


def request(version: int) -> DescribeClusterRequest:
    return DescribeClusterRequest(include_cluster_authorized_operations=True, endpoint_type=ENDPOINT_TYPE_BROKERS)


def response(version: int) -> DescribeClusterResponse:
    return DescribeClusterResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        endpoint_type=ENDPOINT_TYPE_BROKERS,
        cluster_id="spate-cluster-1",
        controller_id=1,
        brokers=[Broker(0, "broker-0.local", 9092, "rack-a"), Broker(1, "broker-1.local", 9093, None)],
        cluster_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED,
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_realistic_messages_round_trip(version: int) -> None:
    for value in (request(version), response(version)):
        assert type(value).decode(value.encode(version), version) == value


GOLDEN = [
    pytest.param(
        DescribeClusterRequest, 0, DescribeClusterRequest(include_cluster_authorized_operations=True),
        # include_cluster_authorized_operations, tags
        boolean(True) + TAGS,
        id="request-v0",
    ),
    pytest.param(
        DescribeClusterRequest, 1,
        DescribeClusterRequest(include_cluster_authorized_operations=False, endpoint_type=ENDPOINT_TYPE_CONTROLLERS),
        # include_cluster_authorized_operations, endpoint_type int8, tags
        boolean(False) + i8(2) + TAGS,
        id="request-v1",
    ),
    pytest.param(
        DescribeClusterResponse, 0,
        DescribeClusterResponse(cluster_id="c", controller_id=2, brokers=[Broker(2, "h", 9092, None)],
                                cluster_authorized_operations=AUTHORIZED_OPERATIONS_OMITTED),
        # throttle_time_ms, error_code, error_message null, cluster_id, controller_id,
        # brokers [broker_id, host, port, rack null, tags], cluster_authorized_operations, tags
        i32(0) + i16(0) + cs(None) + cs("c") + i32(2)
        + carr(1) + i32(2) + cs("h") + i32(9092) + cs(None) + TAGS
        + i32(-(2**31)) + TAGS,
        id="response-v0",
    ),
    pytest.param(
        DescribeClusterResponse, 1,
        DescribeClusterResponse(throttle_time_ms=5, error_code=0, endpoint_type=ENDPOINT_TYPE_BROKERS,
                                cluster_id="c", controller_id=2, brokers=[Broker(2, "h", 9092, "r")],
                                cluster_authorized_operations=0x0F),
        # throttle_time_ms, error_code, error_message null, endpoint_type, cluster_id, controller_id,
        # brokers [broker_id, host, port, rack, tags], cluster_authorized_operations, tags
        i32(5) + i16(0) + cs(None) + i8(1) + cs("c") + i32(2)
        + carr(1) + i32(2) + cs("h") + i32(9092) + cs("r") + TAGS
        + i32(0x0F) + TAGS,
        id="response-v1",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), GOLDEN)
def test_encodes_to_the_documented_bytes(cls: type, version: int, value: object, hex_bytes: str) -> None:
    assert value.encode(version).hex() == hex_bytes  # type: ignore[attr-defined]


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), GOLDEN)
def test_decodes_from_the_documented_bytes(cls: type, version: int, value: object, hex_bytes: str) -> None:
    assert cls.decode(bytes.fromhex(hex_bytes), version) == value  # type: ignore[attr-defined]


def test_endpoint_type_is_absent_from_v0_and_reads_as_brokers() -> None:
    sent = DescribeClusterRequest(endpoint_type=ENDPOINT_TYPE_CONTROLLERS).encode(0)
    assert DescribeClusterRequest.decode(sent, 0).endpoint_type == ENDPOINT_TYPE_BROKERS
    reply = DescribeClusterResponse(endpoint_type=ENDPOINT_TYPE_CONTROLLERS, cluster_id="c").encode(0)
    assert DescribeClusterResponse.decode(reply, 0).endpoint_type == ENDPOINT_TYPE_BROKERS


def test_response_defaults_match_kafka() -> None:
    value = DescribeClusterResponse()
    assert (value.error_message, value.controller_id, value.endpoint_type) == (None, -1, ENDPOINT_TYPE_BROKERS)
    assert value.cluster_authorized_operations == AUTHORIZED_OPERATIONS_OMITTED
    assert Broker().rack is None


@pytest.mark.parametrize("version", VERSIONS)
def test_error_message_and_rack_may_be_null_but_cluster_id_and_host_may_not(version: int) -> None:
    DescribeClusterResponse(error_message=None, brokers=[Broker(rack=None)]).encode(version)
    with pytest.raises(ProtocolUsageError, match="cluster_id"):
        DescribeClusterResponse(cluster_id=None).encode(version)  # type: ignore[arg-type]
    with pytest.raises(ProtocolUsageError, match="host"):
        DescribeClusterResponse(brokers=[Broker(host=None)]).encode(version)  # type: ignore[arg-type]
    # A null cluster_id on the wire (compact length 0) is refused too.
    null_cluster_id = i32(0) + i16(0) + cs(None) + (i8(1) if version else "") + cs(None) + i32(-1) + carr(0)
    with pytest.raises(ProtocolDecodeError, match="cluster_id"):
        DescribeClusterResponse.decode(bytes.fromhex(null_cluster_id + i32(0) + TAGS), version)


def _operations_bits(value: int) -> set[int] | None:
    """kafka-python reads cluster_authorized_operations as a set of bit numbers, None for 'omitted'."""
    if value == AUTHORIZED_OPERATIONS_OMITTED:
        return None
    return {bit for bit in range(32) if (value & 0xFFFFFFFF) >> bit & 1}


@pytest.mark.parametrize("version", VERSIONS)
def test_kafka_python_request_decodes_in_spate(version: int) -> None:
    assert_request_agrees(request(version), version, KpDescribeClusterRequest)
    assert_request_agrees(DescribeClusterRequest(), version, KpDescribeClusterRequest)


@pytest.mark.parametrize("version", VERSIONS)
def test_spate_response_decodes_in_kafka_python(version: int) -> None:
    converters = {"cluster_authorized_operations": _operations_bits}
    kp_names = {"cluster_authorized_operations": "authorized_operations"}
    for value in (response(version), DescribeClusterResponse(error_code=41, error_message="not controller",
                                                              cluster_id="c", cluster_authorized_operations=0x1E)):
        assert_response_agrees(value, version, KpDescribeClusterResponse, converters, kp_names)
