"""UpdateMetadata (API key 6): realistic values per version, hand-built frames, defaults and nullability.

kafka-python has no UpdateMetadata, so the frames below, written from
Kafka's field order, are the reference.
"""

from __future__ import annotations

import uuid

import pytest

from spate.protocol.errors import ProtocolUsageError
from spate.protocol.messages.update_metadata import UpdateMetadataRequest, UpdateMetadataResponse
from spate.protocol.types import ZERO_UUID
from tests.spate.protocol.wire_hex import TAGS, arr, carr, ci32s, cs, i16, i32, i32s, i64, s, uid

VERSIONS = range(8)
ORDERS_ID = uuid.UUID("0f5b8a4e-3c2d-4e1f-8a7b-6c5d4e3f2a1b")
PLAINTEXT = 0
State = UpdateMetadataRequest.UpdateMetadataPartitionState
TopicState = UpdateMetadataRequest.UpdateMetadataTopicState
Broker = UpdateMetadataRequest.UpdateMetadataBroker
Endpoint = UpdateMetadataRequest.UpdateMetadataEndpoint


def partition_state(version: int, index: int) -> State:
    """Broker 1 leads; broker 3 is offline (only said from v4)."""
    return State(
        topic_name="orders" if version <= 4 else "",
        partition_index=index,
        controller_epoch=3,
        leader=1,
        leader_epoch=4,
        isr=[1, 2],
        zk_version=9,
        replicas=[1, 2, 3],
        offline_replicas=[3] if version >= 4 else [],
    )


def broker(version: int, broker_id: int) -> Broker:
    host, port = f"broker-{broker_id}.local", 9092 + broker_id
    if version == 0:
        return Broker(id=broker_id, v0_host=host, v0_port=port)
    listener = "PLAINTEXT" if version >= 3 else ""
    return Broker(
        id=broker_id,
        endpoints=[Endpoint(port, host, listener, PLAINTEXT)],
        rack=f"rack-{broker_id % 2}" if version >= 2 and broker_id != 2 else None,
    )


def request(version: int) -> UpdateMetadataRequest:
    states = [partition_state(version, 0), partition_state(version, 1)]
    grouped = version >= 5
    return UpdateMetadataRequest(
        controller_id=1,
        controller_epoch=3,
        broker_epoch=2**32 + 17 if grouped else -1,
        ungrouped_partition_states=[] if grouped else states,
        topic_states=[TopicState("orders", ORDERS_ID if version >= 7 else ZERO_UUID, states)] if grouped else [],
        live_brokers=[broker(version, 1), broker(version, 2)],
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_realistic_messages_round_trip(version: int) -> None:
    for value in (request(version), UpdateMetadataResponse(error_code=0), UpdateMetadataResponse(error_code=77)):
        assert type(value).decode(value.encode(version), version) == value


GOLDEN = [
    pytest.param(
        UpdateMetadataRequest, 0,
        UpdateMetadataRequest(controller_id=1, controller_epoch=3,
                              ungrouped_partition_states=[State("t", 0, 3, 1, 4, [1], 9, [1, 2])],
                              live_brokers=[Broker(id=1, v0_host="h", v0_port=9092)]),
        # controller_id, controller_epoch,
        # ungrouped_partition_states [topic_name, partition_index, controller_epoch, leader, leader_epoch,
        #                             isr, zk_version, replicas],
        # live_brokers [id, v0_host, v0_port]
        i32(1) + i32(3)
        + arr(1) + s("t") + i32(0) + i32(3) + i32(1) + i32(4) + i32s([1]) + i32(9) + i32s([1, 2])
        + arr(1) + i32(1) + s("h") + i32(9092),
        id="request-v0",
    ),
    pytest.param(
        UpdateMetadataRequest, 5,
        UpdateMetadataRequest(controller_id=1, controller_epoch=3, broker_epoch=17,
                              topic_states=[TopicState("t", partition_states=[
                                  State(partition_index=0, controller_epoch=3, leader=1, leader_epoch=4, isr=[1],
                                        zk_version=9, replicas=[1, 2], offline_replicas=[2])])],
                              live_brokers=[Broker(id=1, endpoints=[Endpoint(9092, "h", "L", PLAINTEXT)], rack=None)]),
        # controller_id, controller_epoch, broker_epoch int64,
        # topic_states [topic_name, partition_states [partition_index, controller_epoch, leader, leader_epoch,
        #   isr, zk_version, replicas, offline_replicas]],
        # live_brokers [id, endpoints [port, host, listener, security_protocol int16], rack null]
        i32(1) + i32(3) + i64(17)
        + arr(1) + s("t") + arr(1) + i32(0) + i32(3) + i32(1) + i32(4) + i32s([1]) + i32(9) + i32s([1, 2])
        + i32s([2])
        + arr(1) + i32(1) + arr(1) + i32(9092) + s("h") + s("L") + i16(PLAINTEXT) + s(None),
        id="request-v5",
    ),
    pytest.param(
        UpdateMetadataRequest, 7,
        UpdateMetadataRequest(controller_id=1, controller_epoch=3, broker_epoch=17,
                              topic_states=[TopicState("t", ORDERS_ID, [
                                  State(partition_index=0, controller_epoch=3, leader=1, leader_epoch=4, isr=[1],
                                        zk_version=9, replicas=[1])])],
                              live_brokers=[Broker(id=1, endpoints=[Endpoint(9092, "h", "L", PLAINTEXT)], rack="r")]),
        # controller_id, controller_epoch, broker_epoch,
        # topic_states compact [topic_name, topic_id uuid, partition_states compact [partition_index,
        #   controller_epoch, leader, leader_epoch, isr, zk_version, replicas, offline_replicas, tags], tags],
        # live_brokers compact [id, endpoints compact [port, host, listener, security_protocol, tags],
        #   rack, tags], tags
        i32(1) + i32(3) + i64(17)
        + carr(1) + cs("t") + uid(ORDERS_ID)
        + carr(1) + i32(0) + i32(3) + i32(1) + i32(4) + ci32s([1]) + i32(9) + ci32s([1]) + ci32s([]) + TAGS + TAGS
        + carr(1) + i32(1) + carr(1) + i32(9092) + cs("h") + cs("L") + i16(PLAINTEXT) + TAGS + cs("r") + TAGS
        + TAGS,
        id="request-v7-flexible",
    ),
    pytest.param(UpdateMetadataResponse, 5, UpdateMetadataResponse(error_code=77), i16(77), id="response-v5"),
    pytest.param(UpdateMetadataResponse, 6, UpdateMetadataResponse(error_code=77), i16(77) + TAGS,
                 id="response-v6-flexible"),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), GOLDEN)
def test_encodes_to_the_documented_bytes(cls: type, version: int, value: object, hex_bytes: str) -> None:
    assert value.encode(version).hex() == hex_bytes  # type: ignore[attr-defined]


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), GOLDEN)
def test_decodes_from_the_documented_bytes(cls: type, version: int, value: object, hex_bytes: str) -> None:
    assert cls.decode(bytes.fromhex(hex_bytes), version) == value  # type: ignore[attr-defined]


def test_v0_broker_has_one_host_and_port_and_no_endpoints_or_rack() -> None:
    decoded = UpdateMetadataRequest.decode(request(7).encode(0), 0)
    assert (decoded.broker_epoch, decoded.topic_states) == (-1, [])
    first = decoded.live_brokers[0]
    assert (first.id, first.v0_host, first.v0_port, first.endpoints, first.rack) == (1, "", 0, [], None)


@pytest.mark.parametrize(
    ("version", "listener", "rack"), [(1, "", None), (2, "", "rack-1"), (3, "PLAINTEXT", "rack-1")]
)
def test_listener_arrives_in_v3_and_rack_in_v2(version: int, listener: str, rack: str | None) -> None:
    decoded = UpdateMetadataRequest.decode(request(7).encode(version), version)
    first = decoded.live_brokers[0]
    assert (first.endpoints[0].listener, first.rack) == (listener, rack)
    assert (first.v0_host, first.v0_port) == ("", 0)


def test_offline_replicas_arrive_in_v4_and_topic_ids_in_v7() -> None:
    v3 = UpdateMetadataRequest.decode(request(4).encode(3), 3)
    assert v3.ungrouped_partition_states[0].offline_replicas == []
    v6 = UpdateMetadataRequest.decode(request(7).encode(6), 6)
    assert v6.topic_states[0].topic_id == ZERO_UUID
    assert v6.topic_states[0].partition_states[0].offline_replicas == [3]


@pytest.mark.parametrize("version", VERSIONS)
def test_only_the_rack_is_nullable(version: int) -> None:
    UpdateMetadataRequest(live_brokers=[Broker(id=1, rack=None)]).encode(version)
    value = request(version)
    if version == 0:
        value.live_brokers[0].v0_host = None  # type: ignore[assignment]
        field = "v0_host"
    elif version <= 4:
        value.ungrouped_partition_states[0].topic_name = None  # type: ignore[assignment]
        field = "topic_name"
    else:
        value.live_brokers[0].endpoints[0].host = None  # type: ignore[assignment]
        field = "host"
    with pytest.raises(ProtocolUsageError, match=field):
        value.encode(version)
