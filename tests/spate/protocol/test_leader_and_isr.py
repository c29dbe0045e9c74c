"""LeaderAndIsr (API key 4): realistic values per version, hand-built frames, defaults and nullability.

kafka-python has no LeaderAndIsr, so the frames below, written from Kafka's
field order, are the reference.
"""

from __future__ import annotations

import uuid

import pytest

from spate.protocol.errors import ProtocolDecodeError, ProtocolUsageError
from spate.protocol.messages.leader_and_isr import (
    TYPE_FULL,
    TYPE_UNKNOWN,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
)
from spate.protocol.types import ZERO_UUID
from tests.spate.protocol.wire_hex import TAGS, arr, boolean, carr, ci32s, cs, i8, i16, i32, i32s, i64, s, uid

VERSIONS = range(6)
ORDERS_ID = uuid.UUID("7d1f7c2e-0b4a-4c1d-9a52-3f6e8b0c1a2d")
State = LeaderAndIsrRequest.LeaderAndIsrPartitionState
TopicState = LeaderAndIsrRequest.LeaderAndIsrTopicState
LiveLeader = LeaderAndIsrRequest.LeaderAndIsrLiveLeader
PartitionError = LeaderAndIsrResponse.LeaderAndIsrPartitionError
TopicError = LeaderAndIsrResponse.LeaderAndIsrTopicError


def partition_state(version: int, index: int) -> State:
    """Broker 1 leads, 2 follows in sync, 3 is being added (a reassignment in progress)."""
    return State(
        topic_name="orders" if version <= 1 else "",
        partition_index=index,
        controller_epoch=3,
        leader=1,
        leader_epoch=7 + index,
        isr=[1, 2],
        partition_epoch=12,
        replicas=[1, 2, 3],
        adding_replicas=[3] if version >= 3 else [],
        removing_replicas=[],
        is_new=version >= 1 and index == 1,
    )


def request(version: int) -> LeaderAndIsrRequest:
    states = [partition_state(version, 0), partition_state(version, 1)]
    grouped = version >= 2
    return LeaderAndIsrRequest(
        controller_id=1,
        controller_epoch=3,
        broker_epoch=2**32 + 5 if version >= 2 else -1,
        type=TYPE_FULL if version >= 5 else TYPE_UNKNOWN,
        ungrouped_partition_states=[] if grouped else states,
        topic_states=[TopicState("orders", ORDERS_ID if version >= 5 else ZERO_UUID, states)] if grouped else [],
        live_leaders=[LiveLeader(1, "broker-1.local", 9092)],
    )


def response(version: int) -> LeaderAndIsrResponse:
    if version <= 4:
        return LeaderAndIsrResponse(
            error_code=0, partition_errors=[PartitionError("orders", 0, 0), PartitionError("orders", 1, 56)]
        )
    return LeaderAndIsrResponse(
        error_code=0, topics=[TopicError(ORDERS_ID, [PartitionError("", 0, 0), PartitionError("", 1, 56)])]
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_realistic_messages_round_trip(version: int) -> None:
    for value in (request(version), response(version)):
        assert type(value).decode(value.encode(version), version) == value


GOLDEN = [
    pytest.param(
        LeaderAndIsrRequest, 1,
        LeaderAndIsrRequest(controller_id=1, controller_epoch=3,
                            ungrouped_partition_states=[State("t", 0, 3, 1, 7, [1, 2], 12, [1, 2], is_new=True)],
                            live_leaders=[LiveLeader(1, "h", 9092)]),
        # controller_id, controller_epoch,
        # ungrouped_partition_states [topic_name, partition_index, controller_epoch, leader, leader_epoch,
        #                             isr [int32], partition_epoch, replicas [int32], is_new],
        # live_leaders [broker_id, host_name, port]
        i32(1) + i32(3)
        + arr(1) + s("t") + i32(0) + i32(3) + i32(1) + i32(7) + i32s([1, 2]) + i32(12) + i32s([1, 2]) + boolean(True)
        + arr(1) + i32(1) + s("h") + i32(9092),
        id="request-v1",
    ),
    pytest.param(
        LeaderAndIsrRequest, 3,
        LeaderAndIsrRequest(controller_id=1, controller_epoch=3, broker_epoch=9,
                            topic_states=[TopicState("t", partition_states=[
                                State(partition_index=0, controller_epoch=3, leader=1, leader_epoch=7, isr=[1],
                                      partition_epoch=12, replicas=[1, 2], adding_replicas=[2])])]),
        # controller_id, controller_epoch, broker_epoch int64,
        # topic_states [topic_name, partition_states [partition_index, controller_epoch, leader, leader_epoch,
        #   isr, partition_epoch, replicas, adding_replicas, removing_replicas, is_new]],
        # live_leaders []
        i32(1) + i32(3) + i64(9)
        + arr(1) + s("t") + arr(1) + i32(0) + i32(3) + i32(1) + i32(7) + i32s([1]) + i32(12) + i32s([1, 2])
        + i32s([2]) + i32s([]) + boolean(False)
        + arr(0),
        id="request-v3",
    ),
    pytest.param(
        LeaderAndIsrRequest, 5,
        LeaderAndIsrRequest(controller_id=1, controller_epoch=3, broker_epoch=9, type=TYPE_FULL,
                            topic_states=[TopicState("t", ORDERS_ID, [
                                State(partition_index=0, controller_epoch=3, leader=1, leader_epoch=7, isr=[1],
                                      partition_epoch=12, replicas=[1], is_new=True)])],
                            live_leaders=[LiveLeader(1, "h", 9092)]),
        # controller_id, controller_epoch, broker_epoch, type int8,
        # topic_states compact [topic_name, topic_id uuid, partition_states compact [partition_index,
        #   controller_epoch, leader, leader_epoch, isr, partition_epoch, replicas, adding_replicas,
        #   removing_replicas, is_new, tags], tags],
        # live_leaders compact [broker_id, host_name, port, tags], tags
        i32(1) + i32(3) + i64(9) + i8(2)
        + carr(1) + cs("t") + uid(ORDERS_ID)
        + carr(1) + i32(0) + i32(3) + i32(1) + i32(7) + ci32s([1]) + i32(12) + ci32s([1]) + ci32s([]) + ci32s([])
        + boolean(True) + TAGS + TAGS
        + carr(1) + i32(1) + cs("h") + i32(9092) + TAGS
        + TAGS,
        id="request-v5-flexible",
    ),
    pytest.param(
        LeaderAndIsrResponse, 1,
        LeaderAndIsrResponse(error_code=0, partition_errors=[PartitionError("t", 2, 56)]),
        # error_code, partition_errors [topic_name, partition_index, error_code]
        i16(0) + arr(1) + s("t") + i32(2) + i16(56),
        id="response-v1",
    ),
    pytest.param(
        LeaderAndIsrResponse, 4,
        LeaderAndIsrResponse(error_code=0, partition_errors=[PartitionError("t", 2, 56)]),
        # error_code, partition_errors compact [topic_name, partition_index, error_code, tags], tags
        i16(0) + carr(1) + cs("t") + i32(2) + i16(56) + TAGS + TAGS,
        id="response-v4-flexible",
    ),
    pytest.param(
        LeaderAndIsrResponse, 5,
        LeaderAndIsrResponse(error_code=0, topics=[TopicError(ORDERS_ID, [PartitionError(partition_index=2)])]),
        # error_code, topics compact [topic_id, partition_errors compact [partition_index, error_code, tags],
        #   tags], tags
        i16(0) + carr(1) + uid(ORDERS_ID) + carr(1) + i32(2) + i16(0) + TAGS + TAGS + TAGS,
        id="response-v5-flexible",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), GOLDEN)
def test_encodes_to_the_documented_bytes(cls: type, version: int, value: object, hex_bytes: str) -> None:
    assert value.encode(version).hex() == hex_bytes  # type: ignore[attr-defined]


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), GOLDEN)
def test_decodes_from_the_documented_bytes(cls: type, version: int, value: object, hex_bytes: str) -> None:
    assert cls.decode(bytes.fromhex(hex_bytes), version) == value  # type: ignore[attr-defined]


def test_v0_request_drops_everything_later_versions_added() -> None:
    later = request(5)
    later.ungrouped_partition_states = [partition_state(5, 0)]
    later.ungrouped_partition_states[0].topic_name = "orders"
    decoded = LeaderAndIsrRequest.decode(later.encode(0), 0)
    assert (decoded.broker_epoch, decoded.type, decoded.topic_states) == (-1, TYPE_UNKNOWN, [])
    state = decoded.ungrouped_partition_states[0]
    assert (state.topic_name, state.adding_replicas, state.removing_replicas, state.is_new) == ("orders", [], [], False)


def test_grouped_states_carry_no_topic_name_and_no_topic_id_before_v5() -> None:
    value = request(5)
    value.topic_states[0].partition_states[0].topic_name = "orders"
    decoded = LeaderAndIsrRequest.decode(value.encode(4), 4)
    assert decoded.topic_states[0].topic_id == ZERO_UUID
    assert decoded.topic_states[0].partition_states[0].topic_name == ""
    assert decoded.type == TYPE_UNKNOWN and decoded.broker_epoch == value.broker_epoch


def test_response_moves_from_topic_names_to_topic_ids_at_v5() -> None:
    v4 = LeaderAndIsrResponse.decode(response(5).encode(4), 4)
    assert v4.partition_errors == [] and v4.topics == []
    v5 = LeaderAndIsrResponse.decode(response(4).encode(5), 5)
    assert v5.partition_errors == [] and v5.topics == []


@pytest.mark.parametrize("version", VERSIONS)
def test_no_field_is_nullable(version: int) -> None:
    with pytest.raises(ProtocolUsageError, match="host_name"):
        LeaderAndIsrRequest(live_leaders=[LiveLeader(1, None, 9092)]).encode(version)  # type: ignore[arg-type]
    with pytest.raises(ProtocolUsageError, match="live_leaders"):
        LeaderAndIsrRequest(live_leaders=None).encode(version)  # type: ignore[arg-type]
    if version >= 3:
        bad = request(version)
        bad.topic_states[0].partition_states[0].adding_replicas = None  # type: ignore[assignment]
        with pytest.raises(ProtocolUsageError, match="adding_replicas"):
            bad.encode(version)


def test_a_null_isr_on_the_wire_is_refused() -> None:
    # v1: one ungrouped partition whose isr array has length -1.
    frame = i32(1) + i32(3) + arr(1) + s("t") + i32(0) + i32(3) + i32(1) + i32(7) + arr(None)
    with pytest.raises(ProtocolDecodeError, match="isr"):
        LeaderAndIsrRequest.decode(bytes.fromhex(frame + i32(12) + arr(0) + boolean(False) + arr(0)), 1)
