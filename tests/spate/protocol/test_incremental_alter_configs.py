"""IncrementalAlterConfigs (API key 44): hand-built frames, null values and kafka-python as an oracle."""

from __future__ import annotations

import pytest
from kafka.protocol.admin import IncrementalAlterConfigsRequest as KpIncrementalAlterConfigsRequest
from kafka.protocol.admin import IncrementalAlterConfigsResponse as KpIncrementalAlterConfigsResponse

from spate.protocol.errors import ProtocolUsageError
from spate.protocol.messages.incremental_alter_configs import (
    OP_APPEND,
    OP_DELETE,
    OP_SET,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)
from tests.spate.protocol.kafka_python_oracle import assert_request_agrees, assert_response_agrees
from tests.spate.protocol.wire_hex import TAGS, arr, boolean, carr, cs, i8, i16, i32, s

VERSIONS = [0, 1]
TOPIC, BROKER = 2, 4  # Kafka's config resource types
Resource = IncrementalAlterConfigsRequest.AlterConfigsResource
Config = IncrementalAlterConfigsRequest.AlterableConfig
Result = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse


def request() -> IncrementalAlterConfigsRequest:
    return IncrementalAlterConfigsRequest(
        resources=[
            Resource(TOPIC, "orders", [
                Config("retention.ms", OP_SET, "86400000"),
                Config("cleanup.policy", OP_APPEND, "compact"),
                Config("segment.bytes", OP_DELETE, None),
            ]),
            Resource(BROKER, "1", [Config("log.cleaner.threads", OP_SET, "2")]),
        ],
        validate_only=False,
    )  # fmt: skip


def response() -> IncrementalAlterConfigsResponse:
    return IncrementalAlterConfigsResponse(
        throttle_time_ms=0,
        responses=[Result(0, None, TOPIC, "orders"), Result(40, "Unknown config", BROKER, "1")],
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_realistic_messages_round_trip(version: int) -> None:
    for value in (request(), response()):
        assert type(value).decode(value.encode(version), version) == value


SMALL_REQUEST = IncrementalAlterConfigsRequest([Resource(TOPIC, "t", [Config("k", OP_DELETE, None)])], True)
SMALL_RESPONSE = IncrementalAlterConfigsResponse(3, [Result(0, None, TOPIC, "t")])

GOLDEN = [
    pytest.param(
        IncrementalAlterConfigsRequest, 0, SMALL_REQUEST,
        # resources [resource_type int8, resource_name, configs [name, config_operation int8, value null]],
        # validate_only
        arr(1) + i8(TOPIC) + s("t") + arr(1) + s("k") + i8(OP_DELETE) + s(None) + boolean(True),
        id="request-v0",
    ),
    pytest.param(
        IncrementalAlterConfigsRequest, 1, SMALL_REQUEST,
        carr(1) + i8(TOPIC) + cs("t") + carr(1) + cs("k") + i8(OP_DELETE) + cs(None) + TAGS + TAGS
        + boolean(True) + TAGS,
        id="request-v1-flexible",
    ),
    pytest.param(
        IncrementalAlterConfigsResponse, 0, SMALL_RESPONSE,
        # throttle_time_ms, responses [error_code, error_message null, resource_type, resource_name]
        i32(3) + arr(1) + i16(0) + s(None) + i8(TOPIC) + s("t"),
        id="response-v0",
    ),
    pytest.param(
        IncrementalAlterConfigsResponse, 1, SMALL_RESPONSE,
        i32(3) + carr(1) + i16(0) + cs(None) + i8(TOPIC) + cs("t") + TAGS + TAGS,
        id="response-v1-flexible",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), GOLDEN)
def test_encodes_to_the_documented_bytes(cls: type, version: int, value: object, hex_bytes: str) -> None:
    assert value.encode(version).hex() == hex_bytes  # type: ignore[attr-defined]


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), GOLDEN)
def test_decodes_from_the_documented_bytes(cls: type, version: int, value: object, hex_bytes: str) -> None:
    assert cls.decode(bytes.fromhex(hex_bytes), version) == value  # type: ignore[attr-defined]


@pytest.mark.parametrize("version", VERSIONS)
def test_values_and_error_messages_may_be_null_but_names_may_not(version: int) -> None:
    with pytest.raises(ProtocolUsageError, match="name"):
        nameless = Config(None, OP_SET, "v")  # type: ignore[arg-type]
        IncrementalAlterConfigsRequest([Resource(TOPIC, "t", [nameless])]).encode(version)
    with pytest.raises(ProtocolUsageError, match="resource_name"):
        IncrementalAlterConfigsResponse(0, [Result(0, None, TOPIC, None)]).encode(version)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", VERSIONS)
def test_kafka_python_request_decodes_in_spate(version: int) -> None:
    assert_request_agrees(request(), version, KpIncrementalAlterConfigsRequest)


@pytest.mark.parametrize("version", VERSIONS)
def test_spate_response_decodes_in_kafka_python(version: int) -> None:
    assert_response_agrees(response(), version, KpIncrementalAlterConfigsResponse)
