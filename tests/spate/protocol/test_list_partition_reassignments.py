"""ListPartitionReassignments (API key 46): null topics lists everything; kafka-python as an oracle."""

from __future__ import annotations

import pytest
from kafka.protocol.admin import ListPartitionReassignmentsRequest as KpListPartitionReassignmentsRequest
from kafka.protocol.admin import ListPartitionReassignmentsResponse as KpListPartitionReassignmentsResponse

from spate.protocol.errors import ProtocolDecodeError, ProtocolUsageError
from spate.protocol.messages.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)
from tests.spate.protocol.kafka_python_oracle import assert_request_agrees, assert_response_agrees
from tests.spate.protocol.wire_hex import TAGS, carr, ci32s, cs, i16, i32

Topics = ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics
Ongoing = ListPartitionReassignmentsResponse.OngoingTopicReassignment
OngoingPartition = ListPartitionReassignmentsResponse.OngoingPartitionReassignment


def response() -> ListPartitionReassignmentsResponse:
    """orders-0 moves from brokers 1, 2 to 2, 3: replicas is the union while it runs."""
    return ListPartitionReassignmentsResponse(
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        topics=[Ongoing("orders", [OngoingPartition(0, [1, 2, 3], adding_replicas=[3], removing_replicas=[1])])],
    )


REQUESTS = [
    ListPartitionReassignmentsRequest(timeout_ms=5000, topics=[Topics("orders", [0, 1])]),
    ListPartitionReassignmentsRequest(timeout_ms=5000, topics=None),
]


def test_realistic_messages_round_trip() -> None:
    for value in (*REQUESTS, response()):
        assert type(value).decode(value.encode(0), 0) == value


GOLDEN = [
    pytest.param(
        ListPartitionReassignmentsRequest, ListPartitionReassignmentsRequest(),
        # timeout_ms, topics null, tags
        i32(60000) + carr(None) + TAGS,
        id="request-v0-everything",
    ),
    pytest.param(
        ListPartitionReassignmentsRequest, ListPartitionReassignmentsRequest(topics=[Topics("t", [0])]),
        # timeout_ms, topics compact [name, partition_indexes, tags], tags
        i32(60000) + carr(1) + cs("t") + ci32s([0]) + TAGS + TAGS,
        id="request-v0-one-topic",
    ),
    pytest.param(
        ListPartitionReassignmentsResponse, ListPartitionReassignmentsResponse(
            topics=[Ongoing("t", [OngoingPartition(0, [1, 2], [2], [1])])]),
        # throttle_time_ms, error_code, error_message null, topics compact [name, partitions compact
        #   [partition_index, replicas, adding_replicas, removing_replicas, tags], tags], tags
        i32(0) + i16(0) + cs(None) + carr(1) + cs("t")
        + carr(1) + i32(0) + ci32s([1, 2]) + ci32s([2]) + ci32s([1]) + TAGS + TAGS + TAGS,
        id="response-v0",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "value", "hex_bytes"), GOLDEN)
def test_encodes_to_the_documented_bytes(cls: type, value: object, hex_bytes: str) -> None:
    assert value.encode(0).hex() == hex_bytes  # type: ignore[attr-defined]


@pytest.mark.parametrize(("cls", "value", "hex_bytes"), GOLDEN)
def test_decodes_from_the_documented_bytes(cls: type, value: object, hex_bytes: str) -> None:
    assert cls.decode(bytes.fromhex(hex_bytes), 0) == value  # type: ignore[attr-defined]


def test_topics_default_to_null_which_lists_every_reassignment() -> None:
    assert ListPartitionReassignmentsRequest().topics is None


def test_replica_lists_in_the_response_are_not_nullable() -> None:
    with pytest.raises(ProtocolUsageError, match="replicas"):
        no_replicas = OngoingPartition(0, None)  # type: ignore[arg-type]
        ListPartitionReassignmentsResponse(topics=[Ongoing("t", [no_replicas])]).encode(0)
    null_replicas = i32(0) + i16(0) + cs(None) + carr(1) + cs("t") + carr(1) + i32(0) + carr(None)
    with pytest.raises(ProtocolDecodeError, match="replicas"):
        ListPartitionReassignmentsResponse.decode(bytes.fromhex(null_replicas + carr(0) + carr(0) + TAGS * 3), 0)


@pytest.mark.parametrize("value", REQUESTS)
def test_kafka_python_request_decodes_in_spate(value: ListPartitionReassignmentsRequest) -> None:
    assert_request_agrees(value, 0, KpListPartitionReassignmentsRequest)


def test_spate_response_decodes_in_kafka_python() -> None:
    assert_response_agrees(response(), 0, KpListPartitionReassignmentsResponse)
