"""AlterPartitionReassignments (API key 45): null replicas cancel; kafka-python as an oracle."""

from __future__ import annotations

import pytest
from kafka.protocol.admin import AlterPartitionReassignmentsRequest as KpAlterPartitionReassignmentsRequest
from kafka.protocol.admin import AlterPartitionReassignmentsResponse as KpAlterPartitionReassignmentsResponse

from spate.protocol.errors import ProtocolUsageError
from spate.protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
)
from tests.spate.protocol.kafka_python_oracle import assert_request_agrees, assert_response_agrees
from tests.spate.protocol.wire_hex import TAGS, carr, ci32s, cs, i16, i32

Topic = AlterPartitionReassignmentsRequest.ReassignableTopic
Partition = AlterPartitionReassignmentsRequest.ReassignablePartition
TopicResponse = AlterPartitionReassignmentsResponse.ReassignableTopicResponse
PartitionResponse = AlterPartitionReassignmentsResponse.ReassignablePartitionResponse


def request() -> AlterPartitionReassignmentsRequest:
    """Move orders-0 onto brokers 2, 3, 4 and cancel the pending move of orders-1."""
    return AlterPartitionReassignmentsRequest(
        timeout_ms=30000, topics=[Topic("orders", [Partition(0, [2, 3, 4]), Partition(1, None)])]
    )


def response() -> AlterPartitionReassignmentsResponse:
    return AlterPartitionReassignmentsResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        responses=[
            TopicResponse("orders", [PartitionResponse(0, 0, None), PartitionResponse(1, 85, "No reassignment")])
        ],
    )


def test_realistic_messages_round_trip() -> None:
    for value in (request(), response()):
        assert type(value).decode(value.encode(0), 0) == value


GOLDEN = [
    pytest.param(
        AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsRequest(
            topics=[Topic("t", [Partition(0, [1, 2]), Partition(1, None)])]),
        # timeout_ms, topics compact [name, partitions compact [partition_index, replicas (null cancels), tags],
        #   tags], tags
        i32(60000) + carr(1) + cs("t") + carr(2) + i32(0) + ci32s([1, 2]) + TAGS + i32(1) + carr(None) + TAGS
        + TAGS + TAGS,
        id="request-v0-flexible",
    ),
    pytest.param(
        AlterPartitionReassignmentsResponse, AlterPartitionReassignmentsResponse(
            error_code=0, responses=[TopicResponse("t", [PartitionResponse(1, 85, "x")])]),
        # throttle_time_ms, error_code, error_message null, responses compact [name, partitions compact
        #   [partition_index, error_code, error_message, tags], tags], tags
        i32(0) + i16(0) + cs(None) + carr(1) + cs("t") + carr(1) + i32(1) + i16(85) + cs("x") + TAGS + TAGS + TAGS,
        id="response-v0-flexible",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "value", "hex_bytes"), GOLDEN)
def test_encodes_to_the_documented_bytes(cls: type, value: object, hex_bytes: str) -> None:
    assert value.encode(0).hex() == hex_bytes  # type: ignore[attr-defined]


@pytest.mark.parametrize(("cls", "value", "hex_bytes"), GOLDEN)
def test_decodes_from_the_documented_bytes(cls: type, value: object, hex_bytes: str) -> None:
    assert cls.decode(bytes.fromhex(hex_bytes), 0) == value  # type: ignore[attr-defined]


def test_replicas_default_to_null_which_cancels_a_reassignment() -> None:
    assert Partition(partition_index=0).replicas is None
    assert AlterPartitionReassignmentsRequest().timeout_ms == 60000


def test_topics_are_not_nullable() -> None:
    with pytest.raises(ProtocolUsageError, match="topics"):
        AlterPartitionReassignmentsRequest(topics=None).encode(0)  # type: ignore[arg-type]


def test_kafka_python_request_decodes_in_spate() -> None:
    assert_request_agrees(request(), 0, KpAlterPartitionReassignmentsRequest)


def test_spate_response_decodes_in_kafka_python() -> None:
    assert_response_agrees(response(), 0, KpAlterPartitionReassignmentsResponse)
