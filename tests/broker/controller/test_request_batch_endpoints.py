"""What the controller tells brokers about each other: every endpoint of every live broker."""

from __future__ import annotations

import uuid
from typing import Any

from broker_core.cluster.endpoint import EndPoint
from broker_core.cluster.metadata_store import BrokerRegistration
from broker_core.controller.context import ControllerContext, LeaderAndIsr
from broker_core.controller.request_batch import ControllerRequestBatch
from spate.protocol import ApiKey
from spate.structs import TopicPartition


class RecordingChannel:
    def __init__(self) -> None:
        self.sent: list[tuple[int, int, Any]] = []

    def send(self, broker_id: int, api_key: int, api_version: int, body: Any, on_response: Any = None) -> bool:
        self.sent.append((broker_id, api_key, body))
        return True


def _broker(broker_id: int) -> BrokerRegistration:
    endpoints = (EndPoint("CLIENT", f"client{broker_id}", 9090 + broker_id),
                 EndPoint("REPLICATION", f"repl{broker_id}", 19090 + broker_id))
    return BrokerRegistration.advertising(broker_id, endpoints, reached_through="REPLICATION")


def test_update_metadata_carries_every_endpoint_with_its_listener_name_and_live_leaders_the_inter_broker_one():
    context = ControllerContext(epoch=3, live_brokers={1: _broker(1), 2: _broker(2)})
    tp = TopicPartition("orders", 0)
    context.add_topic("orders", uuid.uuid4(), {0: (2, 1)})
    context.leadership[tp] = LeaderAndIsr(2, 0, (2, 1), 3, 0)
    channel = RecordingChannel()
    batch = ControllerRequestBatch(context, channel, controller_id=1)
    batch.add_leader_and_isr([1, 2], tp, context.leadership[tp])
    batch.send(3)
    metadata = [body for _, key, body in channel.sent if key == ApiKey.UPDATE_METADATA]
    assert len(metadata) == 2
    for body in metadata:
        assert [
            [(e.listener, e.host, e.port, e.security_protocol) for e in b.endpoints] for b in body.live_brokers
        ] == [
            [("CLIENT", "client1", 9091, 0), ("REPLICATION", "repl1", 19091, 0)],
            [("CLIENT", "client2", 9092, 0), ("REPLICATION", "repl2", 19092, 0)],
        ]
    leader_and_isr = [body for _, key, body in channel.sent if key == ApiKey.LEADER_AND_ISR]
    assert {(l.broker_id, l.host_name, l.port) for body in leader_and_isr for l in body.live_leaders} == {
        (2, "repl2", 19092),
    }
