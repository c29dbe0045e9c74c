"""The group coordinator's lifecycle: owning partitions, shutting down, answering parked requests."""

from __future__ import annotations

import pytest

from broker_core.coordinator.group import GroupState
from spate.protocol.errors import ErrorCode
from tests.broker.coordinator.group.group_harness import Harness

E = ErrorCode
S = GroupState


@pytest.fixture
def h() -> Harness:
    return Harness()


def test_group_operations_on_a_partition_not_owned_are_not_coordinator() -> None:
    h = Harness(create_topic=False)
    assert h.join().error is E.NOT_COORDINATOR
    assert h.heartbeat("m", 1) is E.NOT_COORDINATOR


def test_a_coordinator_that_has_shut_down_is_not_available(h: Harness) -> None:
    h.coordinator.shutdown()
    assert h.join().error is E.COORDINATOR_NOT_AVAILABLE


def test_shutdown_answers_parked_joins_and_syncs_with_not_coordinator(h: Harness) -> None:
    a, b = h.join_new(), h.join_new()
    h.scheduler.advance(0)
    follower = a if a.result.member_id != a.result.leader_id else b
    parked_sync = h.sync(follower.result.member_id, 1)
    parked_join = h.join_new(group="other")
    h.coordinator.shutdown()
    assert parked_sync.error is E.NOT_COORDINATOR
    assert parked_join.error is E.NOT_COORDINATOR
    assert h.scheduler.pending == 0
