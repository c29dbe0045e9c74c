"""StopReplica (API key 5): three partition layouts across versions, and the defaults between them."""

from __future__ import annotations

import pytest

from spate.protocol.errors import ProtocolUsageError
from spate.protocol.messages.stop_replica import StopReplicaRequest, StopReplicaResponse
from tests.spate.protocol.wire_hex import TAGS, arr, boolean, carr, cs, i16, i32, i32s, i64, s

VERSIONS = range(4)
V0Partition = StopReplicaRequest.StopReplicaPartitionV0
V1Topic = StopReplicaRequest.StopReplicaTopicV1
TopicState = StopReplicaRequest.StopReplicaTopicState
PartitionState = StopReplicaRequest.StopReplicaPartitionState
PartitionError = StopReplicaResponse.StopReplicaPartitionError


def request(version: int) -> StopReplicaRequest:
    """Stop replicating orders-0 and orders-1 and delete them (a topic deletion)."""
    value = StopReplicaRequest(controller_id=1, controller_epoch=3)
    if version >= 1:
        value.broker_epoch = 2**32 + 8
    if version == 0:
        value.delete_partitions = True
        value.ungrouped_partitions = [V0Partition("orders", 0), V0Partition("orders", 1)]
    elif version <= 2:
        value.delete_partitions = True
        value.topics = [V1Topic("orders", [0, 1])]
    else:
        value.topic_states = [TopicState("orders", [PartitionState(0, 7, True), PartitionState(1, 6, True)])]
    return value


def response(version: int) -> StopReplicaResponse:
    return StopReplicaResponse(
        error_code=0, partition_errors=[PartitionError("orders", 0, 0), PartitionError("orders", 1, 74)]
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_realistic_messages_round_trip(version: int) -> None:
    for value in (request(version), response(version)):
        assert type(value).decode(value.encode(version), version) == value


GOLDEN = [
    pytest.param(
        StopReplicaRequest, 0, request(0),
        # controller_id, controller_epoch, delete_partitions, ungrouped_partitions [topic_name, partition_index]
        i32(1) + i32(3) + boolean(True) + arr(2) + s("orders") + i32(0) + s("orders") + i32(1),
        id="request-v0",
    ),
    pytest.param(
        StopReplicaRequest, 1, request(1),
        # controller_id, controller_epoch, broker_epoch, delete_partitions, topics [name, partition_indexes]
        i32(1) + i32(3) + i64(2**32 + 8) + boolean(True) + arr(1) + s("orders") + i32s([0, 1]),
        id="request-v1",
    ),
    pytest.param(
        StopReplicaRequest, 3, request(3),
        # controller_id, controller_epoch, broker_epoch,
        # topic_states compact [topic_name, partition_states compact [partition_index, leader_epoch,
        #   delete_partition, tags], tags], tags
        i32(1) + i32(3) + i64(2**32 + 8)
        + carr(1) + cs("orders") + carr(2) + i32(0) + i32(7) + boolean(True) + TAGS
        + i32(1) + i32(6) + boolean(True) + TAGS + TAGS + TAGS,
        id="request-v3-flexible",
    ),
    pytest.param(
        StopReplicaResponse, 2, StopReplicaResponse(0, [PartitionError("t", 1, 74)]),
        # error_code, partition_errors compact [topic_name, partition_index, error_code, tags], tags
        i16(0) + carr(1) + cs("t") + i32(1) + i16(74) + TAGS + TAGS,
        id="response-v2-flexible",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), GOLDEN)
def test_encodes_to_the_documented_bytes(cls: type, version: int, value: object, hex_bytes: str) -> None:
    assert value.encode(version).hex() == hex_bytes  # type: ignore[attr-defined]


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), GOLDEN)
def test_decodes_from_the_documented_bytes(cls: type, version: int, value: object, hex_bytes: str) -> None:
    assert cls.decode(bytes.fromhex(hex_bytes), version) == value  # type: ignore[attr-defined]


def test_each_version_reads_only_its_own_layout() -> None:
    everything = request(3)
    everything.delete_partitions = True
    everything.ungrouped_partitions = request(0).ungrouped_partitions
    everything.topics = request(1).topics
    v0 = StopReplicaRequest.decode(everything.encode(0), 0)
    assert (v0.broker_epoch, v0.topics, v0.topic_states) == (-1, [], [])
    v2 = StopReplicaRequest.decode(everything.encode(2), 2)
    assert (v2.ungrouped_partitions, v2.topic_states, v2.delete_partitions) == ([], [], True)
    v3 = StopReplicaRequest.decode(everything.encode(3), 3)
    assert (v3.ungrouped_partitions, v3.topics, v3.delete_partitions) == ([], [], False)


def test_partition_leader_epoch_defaults_to_unknown() -> None:
    assert PartitionState(partition_index=0).leader_epoch == -1


@pytest.mark.parametrize("version", VERSIONS)
def test_nothing_is_nullable(version: int) -> None:
    value = response(version)
    value.partition_errors[0].topic_name = None  # type: ignore[assignment]
    with pytest.raises(ProtocolUsageError, match="topic_name"):
        value.encode(version)
