"""WriteTxnMarkers (API key 27): hand-built frames and kafka-python as an oracle."""

from __future__ import annotations

import pytest
from kafka.protocol.producer.transaction import WriteTxnMarkersRequest as KpWriteTxnMarkersRequest
from kafka.protocol.producer.transaction import WriteTxnMarkersResponse as KpWriteTxnMarkersResponse

from spate.protocol.errors import ProtocolUsageError
from spate.protocol.messages.write_txn_markers import WriteTxnMarkersRequest, WriteTxnMarkersResponse
from tests.spate.protocol.kafka_python_oracle import assert_request_agrees, assert_response_agrees
from tests.spate.protocol.wire_hex import TAGS, arr, boolean, carr, ci32s, cs, i16, i32, i32s, i64, s

VERSIONS = [0, 1]
Marker = WriteTxnMarkersRequest.WritableTxnMarker
MarkerTopic = WriteTxnMarkersRequest.WritableTxnMarkerTopic
MarkerResult = WriteTxnMarkersResponse.WritableTxnMarkerResult
TopicResult = WriteTxnMarkersResponse.WritableTxnMarkerTopicResult
PartitionResult = WriteTxnMarkersResponse.WritableTxnMarkerPartitionResult


def request() -> WriteTxnMarkersRequest:
    """Commit producer 4000's transaction on two partitions, abort producer 4001's on one."""
    return WriteTxnMarkersRequest(
        markers=[
            Marker(4000, 2, True, [MarkerTopic("orders", [0, 1])], coordinator_epoch=5),
            Marker(4001, 0, False, [MarkerTopic("payments", [3])], coordinator_epoch=5),
        ]
    )


def response() -> WriteTxnMarkersResponse:
    return WriteTxnMarkersResponse(
        markers=[
            MarkerResult(4000, [TopicResult("orders", [PartitionResult(0, 0), PartitionResult(1, 6)])]),
            MarkerResult(4001, [TopicResult("payments", [PartitionResult(3, 0)])]),
        ]
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_realistic_messages_round_trip(version: int) -> None:
    for value in (request(), response()):
        assert type(value).decode(value.encode(version), version) == value


SMALL_REQUEST = WriteTxnMarkersRequest(markers=[Marker(7, 1, True, [MarkerTopic("t", [2])], 3)])
SMALL_RESPONSE = WriteTxnMarkersResponse(markers=[MarkerResult(7, [TopicResult("t", [PartitionResult(2, 0)])])])

GOLDEN = [
    pytest.param(
        WriteTxnMarkersRequest, 0, SMALL_REQUEST,
        # markers [producer_id, producer_epoch, transaction_result, topics [name, partition_indexes],
        #          coordinator_epoch]
        arr(1) + i64(7) + i16(1) + boolean(True) + arr(1) + s("t") + i32s([2]) + i32(3),
        id="request-v0",
    ),
    pytest.param(
        WriteTxnMarkersRequest, 1, SMALL_REQUEST,
        carr(1) + i64(7) + i16(1) + boolean(True) + carr(1) + cs("t") + ci32s([2]) + TAGS + i32(3) + TAGS + TAGS,
        id="request-v1-flexible",
    ),
    pytest.param(
        WriteTxnMarkersResponse, 1, SMALL_RESPONSE,
        # markers compact [producer_id, topics compact [name, partitions compact [partition_index, error_code,
        #   tags], tags], tags], tags
        carr(1) + i64(7) + carr(1) + cs("t") + carr(1) + i32(2) + i16(0) + TAGS + TAGS + TAGS + TAGS,
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
def test_topic_names_are_not_nullable(version: int) -> None:
    with pytest.raises(ProtocolUsageError, match="name"):
        nameless = MarkerTopic(None, [0])  # type: ignore[arg-type]
        WriteTxnMarkersRequest(markers=[Marker(topics=[nameless])]).encode(version)


@pytest.mark.parametrize("version", VERSIONS)
def test_kafka_python_request_decodes_in_spate(version: int) -> None:
    assert_request_agrees(request(), version, KpWriteTxnMarkersRequest)


@pytest.mark.parametrize("version", VERSIONS)
def test_spate_response_decodes_in_kafka_python(version: int) -> None:
    assert_response_agrees(response(), version, KpWriteTxnMarkersResponse)
