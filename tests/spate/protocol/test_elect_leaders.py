"""ElectLeaders (API key 43): null means every partition; kafka-python as an oracle."""

from __future__ import annotations

import pytest
from kafka.protocol.admin import ElectLeadersRequest as KpElectLeadersRequest
from kafka.protocol.admin import ElectLeadersResponse as KpElectLeadersResponse

from spate.protocol.errors import ProtocolUsageError
from spate.protocol.messages.elect_leaders import (
    ELECTION_PREFERRED,
    ELECTION_UNCLEAN,
    ElectLeadersRequest,
    ElectLeadersResponse,
)
from tests.spate.protocol.kafka_python_oracle import assert_request_agrees, assert_response_agrees
from tests.spate.protocol.wire_hex import TAGS, arr, carr, ci32s, cs, i8, i16, i32, i32s, s

VERSIONS = [0, 1, 2]
TopicPartitions = ElectLeadersRequest.TopicPartitions
ElectionResult = ElectLeadersResponse.ReplicaElectionResult
PartitionResult = ElectLeadersResponse.PartitionResult


def request(version: int) -> ElectLeadersRequest:
    return ElectLeadersRequest(
        election_type=ELECTION_UNCLEAN if version >= 1 else ELECTION_PREFERRED,
        topic_partitions=[TopicPartitions("orders", [0, 2]), TopicPartitions("logs", [1])],
        timeout_ms=30000,
    )


def response() -> ElectLeadersResponse:
    return ElectLeadersResponse(
        throttle_time_ms=0,
        error_code=0,
        replica_election_results=[
            ElectionResult(
                "orders", [PartitionResult(0, 0, None), PartitionResult(2, 84, "Leader election not needed")]
            ),
            ElectionResult("logs", [PartitionResult(1, 83, "No eligible leader")]),
        ],
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_realistic_messages_round_trip(version: int) -> None:
    for value in (request(version), response(), ElectLeadersRequest(topic_partitions=None)):
        assert type(value).decode(value.encode(version), version) == value


GOLDEN = [
    pytest.param(
        ElectLeadersRequest, 0, ElectLeadersRequest(topic_partitions=None, timeout_ms=100),
        # topic_partitions null, timeout_ms
        arr(None) + i32(100),
        id="request-v0-all-partitions",
    ),
    pytest.param(
        ElectLeadersRequest, 1,
        ElectLeadersRequest(election_type=ELECTION_UNCLEAN, topic_partitions=[TopicPartitions("t", [0])]),
        # election_type int8, topic_partitions [topic, partitions], timeout_ms
        i8(1) + arr(1) + s("t") + i32s([0]) + i32(60000),
        id="request-v1",
    ),
    pytest.param(
        ElectLeadersRequest, 2, ElectLeadersRequest(topic_partitions=[TopicPartitions("t", [0])]),
        i8(0) + carr(1) + cs("t") + ci32s([0]) + TAGS + i32(60000) + TAGS,
        id="request-v2-flexible",
    ),
    pytest.param(
        ElectLeadersResponse, 2,
        ElectLeadersResponse(replica_election_results=[ElectionResult("t", [PartitionResult(0, 0, None)])]),
        # throttle_time_ms, error_code, replica_election_results compact [topic, partition_result compact
        #   [partition_id, error_code, error_message null, tags], tags], tags
        i32(0) + i16(0) + carr(1) + cs("t") + carr(1) + i32(0) + i16(0) + cs(None) + TAGS + TAGS + TAGS,
        id="response-v2-flexible",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), GOLDEN)
def test_encodes_to_the_documented_bytes(cls: type, version: int, value: object, hex_bytes: str) -> None:
    assert value.encode(version).hex() == hex_bytes  # type: ignore[attr-defined]


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), GOLDEN)
def test_decodes_from_the_documented_bytes(cls: type, version: int, value: object, hex_bytes: str) -> None:
    assert cls.decode(bytes.fromhex(hex_bytes), version) == value  # type: ignore[attr-defined]


def test_v0_elects_preferred_replicas_and_has_no_top_level_error() -> None:
    decoded = ElectLeadersRequest.decode(request(2).encode(0), 0)
    assert decoded.election_type == ELECTION_PREFERRED
    reply = ElectLeadersResponse.decode(ElectLeadersResponse(error_code=41).encode(0), 0)
    assert reply.error_code == 0


@pytest.mark.parametrize("version", VERSIONS)
def test_topic_partitions_and_error_messages_may_be_null_but_topics_may_not(version: int) -> None:
    assert ElectLeadersRequest.decode(ElectLeadersRequest(topic_partitions=None).encode(version), version) == (
        ElectLeadersRequest(topic_partitions=None)
    )
    with pytest.raises(ProtocolUsageError, match="topic"):
        ElectLeadersRequest(topic_partitions=[TopicPartitions(None, [0])]).encode(version)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", VERSIONS)
def test_kafka_python_request_decodes_in_spate(version: int) -> None:
    assert_request_agrees(request(version), version, KpElectLeadersRequest)
    assert_request_agrees(ElectLeadersRequest(topic_partitions=None), version, KpElectLeadersRequest)


@pytest.mark.parametrize("version", VERSIONS)
def test_spate_response_decodes_in_kafka_python(version: int) -> None:
    assert_response_agrees(response(), version, KpElectLeadersResponse)
    assert_response_agrees(ElectLeadersResponse(throttle_time_ms=10), version, KpElectLeadersResponse)
