"""Static membership with confluent-kafka: a restart within the session timeout is invisible to the others."""

from __future__ import annotations

import time

import pytest

from tests.scenarios.groups.members import (
    ConfluentMember,
    close_all,
    covered,
    spread,
    start_all,
    wait_until,
)
from tests.scenarios.groups.scenarios import PARTITIONS, SETTLE_S
from tests.scenarios.groups.topics import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
SESSION_MS = 6000


def test_a_static_member_restarting_within_its_session_keeps_its_partitions_without_a_rebalance(broker, unique):
    topic, group = unique("topic"), unique("group")
    create_topic(broker.bootstrap, topic, PARTITIONS)

    def member(instance: str) -> ConfluentMember:
        return ConfluentMember(broker.bootstrap, group, topic, session_ms=SESSION_MS, instance_id=instance)

    members = start_all([member(f"{group}-host-{i}") for i in range(3)])
    try:
        wait_until(lambda: covered(members, PARTITIONS) and spread(members) == [2, 2, 2], SETTLE_S,
                   "three static members with two partitions each")
        wait_until(lambda: all(m.assigned_calls == 1 for m in members), SETTLE_S, "the first generation to settle")
        restarting, others = members[1], [members[0], members[2]]
        held = restarting.assignment()
        calls = [(m.assigned_calls, m.revoked_calls) for m in others]

        restarting.close()  # a static member does not leave the group on close
        started = time.monotonic()
        replacement = member(restarting.instance_id).start()
        members[1] = replacement
        wait_until(lambda: replacement.assignment() == held, SESSION_MS / 1000, "the restarted member's partitions")
        assert time.monotonic() - started < SESSION_MS / 1000

        time.sleep(2.0)  # several heartbeat intervals: a rebalance would have reached the others by now
        assert [(m.assigned_calls, m.revoked_calls) for m in others] == calls
        assert covered(members, PARTITIONS) and replacement.assignment() == held
    finally:
        close_all(members)
