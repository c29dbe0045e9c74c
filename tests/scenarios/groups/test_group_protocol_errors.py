"""Bad group input over the wire gets Kafka's error codes, and never a corrupt ``__consumer_offsets``."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, TopicPartition

from broker_core.coordinator.group.consumer_protocol import encode_subscription
from broker_core.coordinator.group.offsets_log import (
    GroupMetadataKey,
    decode_group_metadata_value,
    decode_key,
    decode_offset_commit_value,
)
from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.describe_groups import DescribeGroupsRequest
from spate.protocol.messages.find_coordinator import FindCoordinatorRequest
from spate.protocol.messages.heartbeat import HeartbeatRequest
from spate.protocol.messages.join_group import JoinGroupRequest
from spate.protocol.messages.leave_group import LeaveGroupRequest
from spate.protocol.messages.metadata import MetadataRequest
from spate.protocol.messages.offset_commit import OffsetCommitRequest
from spate.protocol.messages.offset_delete import OffsetDeleteRequest
from spate.protocol.messages.offset_fetch import OffsetFetchRequest
from spate.protocol.messages.sync_group import SyncGroupRequest
from tests.scenarios.groups.topics import create_topic
from tests.support.raw_client import RawClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]
E = ErrorCode
PROTOCOLS = [JoinGroupRequest.JoinGroupRequestProtocol("range", encode_subscription(["t"]))]


@pytest.fixture
def raw(broker):
    with RawClient(broker.bootstrap) as client:
        client.call(ApiKey.FIND_COORDINATOR, 2, FindCoordinatorRequest(key="any", key_type=0))
        yield client


def join(raw: RawClient, group: str, member_id: str = "", *, version: int = 5, session_ms: int = 6000,
         protocol_type: str = "consumer", protocols=PROTOCOLS):
    return raw.call(ApiKey.JOIN_GROUP, version, JoinGroupRequest(
        group_id=group, session_timeout_ms=session_ms, rebalance_timeout_ms=10_000, member_id=member_id,
        protocol_type=protocol_type, protocols=protocols,
    ))


def joined_member(raw: RawClient, group: str) -> tuple[str, int]:
    """A member of a one-member Stable group: (member id, generation)."""
    required = join(raw, group)
    assert required.error_code == E.MEMBER_ID_REQUIRED and required.member_id
    response = join(raw, group, required.member_id)
    assert response.error_code == E.NONE and response.leader == response.member_id
    sync = raw.call(ApiKey.SYNC_GROUP, 3, SyncGroupRequest(
        group_id=group, generation_id=response.generation_id, member_id=response.member_id,
        assignments=[SyncGroupRequest.SyncGroupRequestAssignment(response.member_id, b"mine")],
    ))
    assert (sync.error_code, sync.assignment) == (E.NONE, b"mine")
    return response.member_id, response.generation_id


def heartbeat(raw: RawClient, group: str, member_id: str, generation: int) -> int:
    return raw.call(ApiKey.HEARTBEAT, 3, HeartbeatRequest(group_id=group, generation_id=generation,
                                                          member_id=member_id)).error_code


def commit(raw: RawClient, group: str, topic: str, *, member_id: str = "", generation: int = -1,
           metadata: str | None = "", version: int = 7):
    response = raw.call(ApiKey.OFFSET_COMMIT, version, OffsetCommitRequest(
        group_id=group, generation_id_or_member_epoch=generation, member_id=member_id,
        topics=[OffsetCommitRequest.OffsetCommitRequestTopic(topic, [
            OffsetCommitRequest.OffsetCommitRequestPartition(partition_index=0, committed_offset=3,
                                                             committed_metadata=metadata),
        ])],
    ))
    return response.topics[0].partitions[0].error_code


def test_find_coordinator_names_this_broker_for_groups_and_transactions(broker, raw):
    group = raw.call(ApiKey.FIND_COORDINATOR, 2, FindCoordinatorRequest(key="g", key_type=0))
    assert (group.error_code, f"{group.host}:{group.port}") == (E.NONE, broker.bootstrap)
    txn = raw.call(ApiKey.FIND_COORDINATOR, 2, FindCoordinatorRequest(key="t", key_type=1))
    assert (txn.error_code, f"{txn.host}:{txn.port}") == (E.NONE, broker.bootstrap)
    assert raw.call(ApiKey.FIND_COORDINATOR, 0, FindCoordinatorRequest(key="g")).error_code == E.NONE


def test_consumer_offsets_is_an_internal_topic_in_metadata(raw):
    response = raw.call(ApiKey.METADATA, 8, MetadataRequest(
        topics=[MetadataRequest.MetadataRequestTopic(name="__consumer_offsets")], allow_auto_topic_creation=False,
    ))
    (topic,) = response.topics
    assert topic.error_code == E.NONE and topic.is_internal
    assert len(topic.partitions) == 10


def test_join_group_error_codes(raw, unique):
    group = unique("group")
    assert join(raw, "").error_code == E.INVALID_GROUP_ID
    assert join(raw, group, session_ms=500).error_code == E.INVALID_SESSION_TIMEOUT
    assert join(raw, group, "no-such-member").error_code == E.UNKNOWN_MEMBER_ID
    joined_member(raw, group)
    assert join(raw, group, protocol_type="connect").error_code == E.INCONSISTENT_GROUP_PROTOCOL
    other = [JoinGroupRequest.JoinGroupRequestProtocol("roundrobin", b"")]
    assert join(raw, group, protocols=other).error_code == E.INCONSISTENT_GROUP_PROTOCOL


def test_join_group_v0_gets_a_member_id_in_one_round_trip(raw, unique):
    response = join(raw, unique("group"), version=0)
    assert response.error_code == E.NONE and response.generation_id == 1 and response.member_id


def test_heartbeat_and_sync_reject_unknown_members_and_stale_generations(raw, unique):
    group = unique("group")
    assert heartbeat(raw, group, "ghost", 1) == E.UNKNOWN_MEMBER_ID
    member, generation = joined_member(raw, group)
    assert heartbeat(raw, group, member, generation) == E.NONE
    assert heartbeat(raw, group, "ghost", generation) == E.UNKNOWN_MEMBER_ID
    assert heartbeat(raw, group, member, generation + 1) == E.ILLEGAL_GENERATION
    stale = raw.call(ApiKey.SYNC_GROUP, 3, SyncGroupRequest(group_id=group, generation_id=generation - 1,
                                                            member_id=member, assignments=[]))
    assert stale.error_code == E.ILLEGAL_GENERATION
    assert heartbeat(raw, "", member, generation) == E.INVALID_GROUP_ID


def test_offset_commit_error_codes_and_oversized_metadata(raw, unique):
    group, topic = unique("group"), unique("topic")
    create_topic(raw_bootstrap(raw), topic, 1)
    member, generation = joined_member(raw, group)
    assert commit(raw, group, "no-such-topic") == E.UNKNOWN_TOPIC_OR_PARTITION
    assert commit(raw, group, topic, member_id="ghost", generation=generation) == E.UNKNOWN_MEMBER_ID
    assert commit(raw, group, topic, member_id=member, generation=generation + 5) == E.ILLEGAL_GENERATION
    assert commit(raw, group, topic, member_id=member, generation=generation,
                  metadata="x" * 4097) == E.OFFSET_METADATA_TOO_LARGE
    assert commit(raw, group, topic, member_id=member, generation=generation, metadata="x" * 4096) == E.NONE
    assert commit(raw, unique("fresh"), topic, member_id="m", generation=3, version=2) == E.ILLEGAL_GENERATION


def test_offset_fetch_answers_minus_one_for_nothing_committed_in_every_version(raw, unique):
    group, topic = unique("group"), unique("topic")
    create_topic(raw_bootstrap(raw), topic, 2)
    assert commit(raw, group, topic) == E.NONE
    wanted = [OffsetFetchRequest.OffsetFetchRequestTopic(topic, [0, 1])]
    for version in (1, 5):
        response = raw.call(ApiKey.OFFSET_FETCH, version, OffsetFetchRequest(group_id=group, topics=wanted))
        offsets = {p.partition_index: (p.committed_offset, p.error_code) for p in response.topics[0].partitions}
        assert offsets == {0: (3, E.NONE), 1: (-1, E.NONE)}
    everything = raw.call(ApiKey.OFFSET_FETCH, 5, OffsetFetchRequest(group_id=group, topics=None))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in everything.topics] == [(topic, [0])]


def test_leave_group_v0_and_batched_v3(raw, unique):
    group = unique("group")
    member, _ = joined_member(raw, group)
    v0 = raw.call(ApiKey.LEAVE_GROUP, 0, LeaveGroupRequest(group_id=group, member_id="ghost"))
    assert v0.error_code == E.UNKNOWN_MEMBER_ID
    v3 = raw.call(ApiKey.LEAVE_GROUP, 3, LeaveGroupRequest(group_id=group, members=[
        LeaveGroupRequest.MemberIdentity(member_id=member), LeaveGroupRequest.MemberIdentity(member_id="ghost"),
    ]))
    assert v3.error_code == E.NONE
    assert [m.error_code for m in v3.members] == [E.NONE, E.UNKNOWN_MEMBER_ID]
    described = raw.call(ApiKey.DESCRIBE_GROUPS, 4, DescribeGroupsRequest(groups=[group, unique("nobody")]))
    assert [(g.error_code, g.group_state) for g in described.groups] == [(E.NONE, "Empty"), (E.NONE, "Dead")]


def test_offset_delete_of_an_unknown_group_and_topic(raw, unique):
    group, topic = unique("group"), unique("topic")
    create_topic(raw_bootstrap(raw), topic, 1)
    request = OffsetDeleteRequest(group_id=group, topics=[
        OffsetDeleteRequest.OffsetDeleteRequestTopic(topic, [OffsetDeleteRequest.OffsetDeleteRequestPartition(0)]),
    ])
    assert raw.call(ApiKey.OFFSET_DELETE, 0, request).error_code == E.GROUP_ID_NOT_FOUND
    commit(raw, group, topic)
    request.topics.append(OffsetDeleteRequest.OffsetDeleteRequestTopic(
        "no-such-topic", [OffsetDeleteRequest.OffsetDeleteRequestPartition(0)]
    ))
    response = raw.call(ApiKey.OFFSET_DELETE, 0, request)
    assert response.error_code == E.NONE
    assert [[p.error_code for p in t.partitions] for t in response.topics] == [[E.NONE], [E.UNKNOWN_TOPIC_OR_PARTITION]]


def test_every_record_in_consumer_offsets_decodes_after_all_that(broker, raw, unique):
    """Runs after the error tests in this module: whatever they sent, the topic holds only valid records."""
    joined_member(raw, unique("group"))
    reader = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": unique("reader"),
                       "enable.auto.commit": False, "fetch.wait.max.ms": 100})
    reader.assign([TopicPartition("__consumer_offsets", p, 0) for p in range(10)])
    records = []
    try:
        while True:
            batch = reader.consume(500, 2.0)
            if not batch:
                break
            records.extend(m for m in batch if m.error() is None)
    finally:
        reader.close()
    assert records
    for message in records:
        key = decode_key(message.key())
        if message.value() is None:
            continue
        if isinstance(key, GroupMetadataKey):
            decode_group_metadata_value(message.value())
        else:
            assert decode_offset_commit_value(message.value()).offset >= 0


def raw_bootstrap(raw: RawClient) -> str:
    host, port = raw.sock.getpeername()[:2]
    return f"{host}:{port}"
