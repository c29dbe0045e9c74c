"""The newest group versions Kafka 3.9 serves, raw over the wire against a real broker.

JoinGroup v9 names the protocol type (v7+); SyncGroup v5 checks the protocol
a member names and answers the group's; ListGroups v5 filters by state and
type and names both; Heartbeat v4, LeaveGroup v5 (with a reason) and
DescribeGroups v5 are flexible.
"""

from __future__ import annotations

import pytest

from broker_core.coordinator.group.consumer_protocol import encode_subscription
from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.describe_groups import DescribeGroupsRequest
from spate.protocol.messages.find_coordinator import FindCoordinatorRequest
from spate.protocol.messages.heartbeat import HeartbeatRequest
from spate.protocol.messages.join_group import JoinGroupRequest
from spate.protocol.messages.leave_group import LeaveGroupRequest
from spate.protocol.messages.list_groups import ListGroupsRequest
from spate.protocol.messages.sync_group import SyncGroupRequest
from tests.support.raw_client import RawClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]
E = ErrorCode
PROTOCOLS = [JoinGroupRequest.JoinGroupRequestProtocol("range", encode_subscription(["t"]))]


@pytest.fixture
def raw(broker):
    with RawClient(broker.bootstrap) as client:
        client.call(ApiKey.FIND_COORDINATOR, 4, FindCoordinatorRequest(key_type=0, coordinator_keys=["any"]))
        yield client


def _join(raw: RawClient, group: str, member_id: str = "") -> object:
    return raw.call(ApiKey.JOIN_GROUP, 9, JoinGroupRequest(
        group_id=group, session_timeout_ms=6000, rebalance_timeout_ms=10_000, member_id=member_id,
        protocol_type="consumer", protocols=PROTOCOLS, reason="starting up",
    ))


def _joined(raw: RawClient, group: str) -> object:
    required = _join(raw, group)
    assert required.error_code == E.MEMBER_ID_REQUIRED
    joined = _join(raw, group, required.member_id)
    assert joined.error_code == E.NONE
    return joined


def _sync(raw: RawClient, group: str, joined: object, **protocol: str) -> object:
    return raw.call(ApiKey.SYNC_GROUP, 5, SyncGroupRequest(
        group_id=group, generation_id=joined.generation_id, member_id=joined.member_id,
        assignments=[SyncGroupRequest.SyncGroupRequestAssignment(member_id=joined.member_id, assignment=b"mine")],
        **protocol,
    ))


def test_join_group_v9_names_the_protocol_type_and_never_skips_assignment(raw, unique) -> None:
    joined = _joined(raw, unique("g"))
    assert (joined.protocol_type, joined.protocol_name, joined.skip_assignment) == ("consumer", "range", False)


def test_sync_group_v5_answers_the_groups_protocol(raw, unique) -> None:
    group = unique("g")
    joined = _joined(raw, group)
    synced = _sync(raw, group, joined, protocol_type="consumer", protocol_name="range")
    assert (synced.error_code, synced.protocol_type, synced.protocol_name, synced.assignment) == (
        E.NONE, "consumer", "range", b"mine")


def test_sync_group_v5_refuses_a_protocol_other_than_the_groups(raw, unique) -> None:
    group = unique("g")
    joined = _joined(raw, group)
    synced = _sync(raw, group, joined, protocol_type="consumer", protocol_name="roundrobin")
    assert synced.error_code == E.INCONSISTENT_GROUP_PROTOCOL


def test_list_groups_v5_filters_by_state_and_type(raw, unique) -> None:
    group = unique("g")
    joined = _joined(raw, group)
    assert _sync(raw, group, joined).error_code == E.NONE

    def listed(states: list[str], types: list[str]) -> dict[str, tuple[str, str]]:
        body = raw.call(ApiKey.LIST_GROUPS, 5, ListGroupsRequest(states_filter=states, types_filter=types))
        return {g.group_id: (g.group_state, g.group_type) for g in body.groups}

    assert listed([], [])[group] == ("Stable", "classic")
    assert group in listed(["stable"], ["Classic"])
    assert group not in listed(["Empty"], [])
    assert group not in listed([], ["consumer"])


def test_heartbeat_v4_describe_groups_v5_and_leave_group_v5(raw, unique) -> None:
    group = unique("g")
    joined = _joined(raw, group)
    assert _sync(raw, group, joined).error_code == E.NONE
    beat = raw.call(ApiKey.HEARTBEAT, 4, HeartbeatRequest(group_id=group, generation_id=joined.generation_id,
                                                           member_id=joined.member_id))
    assert beat.error_code == E.NONE
    described = raw.call(ApiKey.DESCRIBE_GROUPS, 5, DescribeGroupsRequest(groups=[group])).groups[0]
    assert (described.group_state, [m.member_id for m in described.members]) == ("Stable", [joined.member_id])
    L = LeaveGroupRequest
    left = raw.call(ApiKey.LEAVE_GROUP, 5, L(group_id=group, members=[
        L.MemberIdentity(member_id=joined.member_id, reason="shutting down")]))
    assert (left.error_code, [m.error_code for m in left.members]) == (E.NONE, [E.NONE])
