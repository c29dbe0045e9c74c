"""DescribeGroups, ListGroups, DeleteGroups and OffsetDelete."""

from __future__ import annotations

import pytest

from broker_core.coordinator.group import GroupState, Protocol
from broker_core.coordinator.group.results import MemberIdentity, OffsetCommitEntry
from broker_core.storage.files import TopicPartition
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import RANGE, Harness

E = ErrorCode
S = GroupState
T0, U0 = TopicPartition("t", 0), TopicPartition("u", 0)


@pytest.fixture
def h() -> Harness:
    return Harness()


def commit(h: Harness, group: str, *tps: TopicPartition, member: str = "", generation: int = -1) -> None:
    h.coordinator.commit_offsets(
        group_id=group, member_id=member, group_instance_id=None, generation_id=generation,
        offsets={tp: OffsetCommitEntry(1) for tp in tps},
    )


def test_describe_a_stable_group_shows_protocol_members_metadata_and_assignments(h: Harness) -> None:
    results = h.form_group(2)
    described = h.coordinator.describe_group("g")
    assert (described.error, described.state, described.protocol_type, described.protocol_name) == (
        E.NONE, "Stable", "consumer", "range",
    )
    assert {m.member_id: (m.client_id, m.client_host, m.metadata, m.assignment) for m in described.members} == {
        r.member_id: ("client", "/127.0.0.1", RANGE[0].metadata, r.member_id.encode()) for r in results
    }


def test_describe_a_rebalancing_group_hides_metadata_and_protocol(h: Harness) -> None:
    h.form_group(1)
    h.join_new()
    described = h.coordinator.describe_group("g")
    assert described.state == "PreparingRebalance" and described.protocol_name == ""
    assert all(m.metadata == b"" and m.assignment == b"" for m in described.members)


def test_describe_an_unknown_group_reads_as_dead_without_error(h: Harness) -> None:
    described = h.coordinator.describe_group("nobody")
    assert (described.error, described.state, described.members) == (E.NONE, "Dead", ())


def test_describe_on_a_broker_that_is_not_the_coordinator(h: Harness) -> None:
    assert Harness(create_topic=False).coordinator.describe_group("g").error is E.NOT_COORDINATOR


def test_list_groups_shows_every_group_with_its_protocol_type(h: Harness) -> None:
    h.form_group(1, group="active")
    commit(h, "simple", T0)
    listed = h.coordinator.list_groups()
    assert listed.error is E.NONE
    assert {(g.group_id, g.protocol_type, g.state) for g in listed.groups} == {
        ("active", "consumer", "Stable"), ("simple", "", "Empty"),
    }


def test_delete_groups_removes_empty_groups_and_their_offsets(h: Harness) -> None:
    commit(h, "simple", T0)
    member = h.form_group(1, group="busy")[0].member_id
    assert h.coordinator.delete_groups(["simple", "busy", "nobody", ""]) == {
        "simple": E.NONE, "busy": E.NON_EMPTY_GROUP, "nobody": E.GROUP_ID_NOT_FOUND, "": E.GROUP_ID_NOT_FOUND,
    }
    assert h.group("simple") is None
    assert h.coordinator.fetch_offsets(group_id="simple", partitions=[T0]).offsets[T0].offset == -1
    h.coordinator.leave_group(group_id="busy", members=[MemberIdentity(member)])
    assert h.coordinator.delete_groups(["busy"]) == {"busy": E.NONE}


def test_a_failed_delete_keeps_the_group(h: Harness) -> None:
    commit(h, "simple", T0)
    h.topic.fail_with = E.NOT_LEADER_OR_FOLLOWER
    assert h.coordinator.delete_groups(["simple"]) == {"simple": E.NOT_COORDINATOR}
    assert h.group("simple").state is S.EMPTY


def test_offset_delete_refuses_topics_the_group_consumes(h: Harness) -> None:
    member = h.form_group(1)[0].member_id  # subscribed to "t"
    commit(h, "g", T0, U0, member=member, generation=1)
    result = h.coordinator.delete_offsets(group_id="g", partitions=[T0, U0])
    assert result.error is E.NONE
    assert result.partitions == {T0: E.GROUP_SUBSCRIBED_TO_TOPIC, U0: E.NONE}
    offsets = h.coordinator.fetch_offsets(group_id="g", partitions=[T0, U0]).offsets
    assert (offsets[T0].offset, offsets[U0].offset) == (1, -1)


def test_offset_delete_of_an_empty_group_removes_any_partition(h: Harness) -> None:
    commit(h, "simple", T0, U0)
    result = h.coordinator.delete_offsets(group_id="simple", partitions=[T0])
    assert result.partitions == {T0: E.NONE}
    assert h.coordinator.fetch_offsets(group_id="simple", partitions=[T0]).offsets[T0].offset == -1


def test_offset_delete_group_level_errors(h: Harness) -> None:
    assert h.coordinator.delete_offsets(group_id="nobody", partitions=[T0]).error is E.GROUP_ID_NOT_FOUND
    assert h.coordinator.delete_offsets(group_id="", partitions=[T0]).error is E.INVALID_GROUP_ID
    h.form_group(1, group="connect", protocol_type="connect", protocols=[Protocol("default", b"anything")])
    assert h.coordinator.delete_offsets(group_id="connect", partitions=[T0]).error is E.NON_EMPTY_GROUP
