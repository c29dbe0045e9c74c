"""ConsumerGroupHeartbeat and ConsumerGroupDescribe on the wire, with Kafka's nullable struct (int8 marker)."""

from __future__ import annotations

import uuid

import pytest

from spate.protocol.errors import ProtocolDecodeError
from spate.protocol.messages.consumer_group_describe import ConsumerGroupDescribeResponse
from spate.protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)

R = ConsumerGroupHeartbeatResponse
TOPIC = uuid.UUID(int=1)


def test_a_response_without_an_assignment_ends_with_the_null_marker() -> None:
    encoded = R(error_code=0, member_epoch=3, heartbeat_interval_ms=5000).encode(0)
    # throttle, error, null message, null member id, epoch, interval, assignment -1, no tags
    assert encoded.hex() == "00000000" "0000" "00" "00" "00000003" "00001388" "ff" "00"
    assert R.decode(encoded, 0).assignment is None


def test_a_present_assignment_follows_the_marker_one() -> None:
    body = R(member_epoch=1, assignment=R.Assignment(topic_partitions=[R.TopicPartitions(topic_id=TOPIC,
                                                                                         partitions=[0, 2])]))
    encoded = body.encode(0)
    assert encoded[16:17] == b"\x01"
    assert R.decode(encoded, 0) == body


def test_any_other_marker_is_refused() -> None:
    encoded = bytearray(R(member_epoch=1).encode(0))
    encoded[16] = 0x05
    with pytest.raises(ProtocolDecodeError, match="null marker"):
        R.decode(bytes(encoded), 0)


def test_only_version_1_carries_a_topic_regex() -> None:
    Q = ConsumerGroupHeartbeatRequest
    body = Q(group_id="g", member_id="m", member_epoch=0, rebalance_timeout_ms=1000, subscribed_topic_regex="a.*")
    assert Q.decode(body.encode(1), 1).subscribed_topic_regex == "a.*"
    assert Q.decode(body.encode(0), 0).subscribed_topic_regex is None


def test_describe_round_trips_members_with_both_assignments() -> None:
    D = ConsumerGroupDescribeResponse
    tp = D.TopicPartitions(topic_id=TOPIC, topic_name="t", partitions=[1])
    body = D(groups=[D.DescribedGroup(group_id="g", group_state="Stable", group_epoch=2, assignment_epoch=2,
                                      assignor_name="uniform", members=[D.Member(
                                          member_id="m", member_epoch=2, client_id="c", client_host="/h",
                                          subscribed_topic_names=["t"], assignment=D.Assignment([tp]),
                                          target_assignment=D.Assignment([tp]))])])
    assert D.decode(body.encode(0), 0) == body
