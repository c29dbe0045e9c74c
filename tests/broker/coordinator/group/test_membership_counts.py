"""The counts a group keeps so no JoinGroup walks every member: protocols shared by all, members awaiting join.

Each is checked against the count made the long way, over the members, after
every step of a random sequence of joins, rejoins, protocol changes, answers
and removals; and through the coordinator, where a changed protocol list must
change who may join.
"""

from __future__ import annotations

import random

import pytest

from broker_core.coordinator.group import GroupState, Protocol
from broker_core.coordinator.group.group_metadata import GroupMetadata
from broker_core.coordinator.group.member import MemberMetadata
from broker_core.coordinator.group.supported_protocols import SupportedProtocols
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import Harness, subscription

E = ErrorCode
S = GroupState
NAMES = ("range", "roundrobin", "sticky")


def _member(member_id: str, names: tuple[str, ...], *, parked: bool = False) -> MemberMetadata:
    return MemberMetadata(
        member_id=member_id, group_instance_id=None, client_id="c", client_host="/h", rebalance_timeout_ms=1000,
        session_timeout_ms=1000, protocol_type="consumer", protocols=tuple(Protocol(n, b"") for n in names),
        join_callback=(lambda result: None) if parked else None,
    )


def _shared_the_long_way(group: GroupMetadata) -> set[str]:
    sets = [set(m.protocol_names) for m in group.members.values()]
    return set.intersection(*sets) if sets else set()


def test_supported_protocols_are_those_every_counted_member_lists() -> None:
    supported = SupportedProtocols()
    supported.add(["range", "roundrobin"])
    supported.add(["range"])
    assert supported.shared_by(2) == {"range"}
    supported.remove(["range"])
    assert supported.shared_by(1) == {"range", "roundrobin"}


def test_a_protocol_listed_twice_by_one_member_counts_once() -> None:
    supported = SupportedProtocols()
    supported.add(["range", "range"])
    supported.add(["roundrobin"])
    assert supported.shared_by(2) == set()
    supported.remove(["roundrobin"])
    assert supported.shared_by(1) == {"range"}


def test_parking_a_join_supersedes_the_one_parked_before_and_counts_the_member_once() -> None:
    group = GroupMetadata("g", state=S.PREPARING_REBALANCE)
    member = _member("a", ("range",))
    group.add_member(member)
    first, second = (lambda result: None), (lambda result: None)
    assert group.park_join(member, first) is None
    assert group.park_join(member, second) is first
    assert group.awaiting_join_count == 1
    assert group.take_join_callback(member) is second
    assert group.take_join_callback(member) is None
    assert group.awaiting_join_count == 0


def test_a_removed_member_no_longer_counts_even_if_its_join_is_answered_later() -> None:
    group = GroupMetadata("g", state=S.PREPARING_REBALANCE)
    member = _member("a", ("range",), parked=True)
    group.add_member(member)
    group.add_member(_member("b", ("range",)))
    group.remove_member("a")
    assert group.awaiting_join_count == 0
    assert group.take_join_callback(member) is not None
    assert group.awaiting_join_count == 0
    assert not group.has_all_members_joined


def test_only_members_of_the_group_are_counted() -> None:
    group = GroupMetadata("g", state=S.PREPARING_REBALANCE)
    group.add_member(_member("a", ("range",)))
    stranger = _member("b", ("roundrobin",))
    group.update_protocols(stranger, [Protocol("sticky", b"")])
    group.park_join(stranger, lambda result: None)
    assert group.candidate_protocols() == {"range"}
    assert group.awaiting_join_count == 0


@pytest.mark.parametrize("seed", range(20))
def test_counts_match_the_members_after_any_sequence_of_changes(seed: int) -> None:
    rng = random.Random(seed)
    group = GroupMetadata("g", state=S.PREPARING_REBALANCE)
    next_id = 0
    for step in range(300):
        members = list(group.members.values())
        action = rng.choice(["add", "add", "remove", "protocols", "park", "take"] if members else ["add"])
        if action == "add":
            names = tuple(rng.sample(NAMES, rng.randint(1, 3)))
            group.add_member(_member(f"m{next_id}", names, parked=rng.random() < 0.5))
            next_id += 1
        elif action == "remove":
            group.remove_member(rng.choice(members).member_id)
        elif action == "protocols":
            names = tuple(rng.sample(NAMES, rng.randint(1, 3)))
            group.update_protocols(rng.choice(members), [Protocol(n, b"") for n in names])
        elif action == "park":
            group.park_join(rng.choice(members), lambda result: None)
        else:
            group.take_join_callback(rng.choice(members))
        waiting = sum(1 for m in group.members.values() if m.is_awaiting_join)
        assert group.awaiting_join_count == waiting, f"seed {seed}, step {step}: {action}"
        assert group.has_all_members_joined == (waiting == len(group)), f"seed {seed}, step {step}: {action}"
        if group.members:
            assert group.candidate_protocols() == _shared_the_long_way(group), f"seed {seed}, step {step}: {action}"


def test_a_protocol_every_member_dropped_on_rejoining_no_longer_admits_newcomers() -> None:
    h = Harness()
    both = [Protocol("range", subscription("t")), Protocol("roundrobin", subscription("t"))]
    first, second = h.form_group(2, protocols=both)
    h.join(first.member_id, protocols=[Protocol("range", subscription("t"))])
    h.join(second.member_id, protocols=[Protocol("range", subscription("t"))])
    h.scheduler.advance(0)
    newcomer = h.join(protocols=[Protocol("roundrobin", subscription("t"))])
    assert newcomer.error is E.INCONSISTENT_GROUP_PROTOCOL
    assert h.join(protocols=[Protocol("range", subscription("t"))]).error is E.MEMBER_ID_REQUIRED


def test_the_join_phase_completes_when_the_last_of_many_members_rejoins() -> None:
    h = Harness()
    results = h.form_group(50)
    replies = [h.join(r.member_id) for r in results[:-1]]
    assert h.group().is_(S.PREPARING_REBALANCE) and not any(r.done for r in replies)
    last = h.join(results[-1].member_id)
    assert [r.result.generation_id for r in replies + [last]] == [2] * 50
    assert h.group().is_(S.COMPLETING_REBALANCE)
