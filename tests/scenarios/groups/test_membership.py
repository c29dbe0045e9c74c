"""Members of every client library share a group's partitions the way Kafka's coordinator hands them out.

For confluent-kafka (librdkafka), kafka-python and aiokafka alike: joining
members spread the partitions evenly, members beyond the partition count stay
idle, a member that closes hands its partitions over at once (it leaves the
group), and a member killed without a goodbye keeps them until its session
expires.
"""

from __future__ import annotations

import pytest

from tests.scenarios.groups.members import MEMBERS
from tests.scenarios.groups.scenarios import (
    grow_spread_idle_and_close,
    killed_member_partitions_move_after_session_timeout,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


@pytest.mark.parametrize("client", sorted(MEMBERS))
def test_members_share_partitions_spread_on_join_idle_beyond_the_count_and_take_over_on_close(broker, unique, client):
    grow_spread_idle_and_close(MEMBERS[client], broker.bootstrap, unique("topic"), unique("group"))


@pytest.mark.parametrize("client", sorted(MEMBERS))
def test_a_killed_members_partitions_move_after_its_session_timeout(broker, unique, client):
    killed_member_partitions_move_after_session_timeout(
        MEMBERS[client], client, broker.bootstrap, unique("topic"), unique("group"), session_ms=6000
    )
