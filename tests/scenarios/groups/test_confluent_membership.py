"""confluent-kafka (librdkafka) consumers in groups coordinated by Spate."""

from __future__ import annotations

import pytest

from tests.scenarios.groups.members import ConfluentMember
from tests.scenarios.groups.scenarios import (
    grow_spread_idle_and_close,
    killed_member_partitions_move_after_session_timeout,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def test_members_share_partitions_spread_on_join_idle_beyond_the_count_and_take_over_on_close(broker, unique):
    grow_spread_idle_and_close(ConfluentMember, broker.bootstrap, unique("topic"), unique("group"))


def test_a_killed_members_partitions_move_after_its_session_timeout(broker, unique):
    killed_member_partitions_move_after_session_timeout(
        ConfluentMember, "confluent", broker.bootstrap, unique("topic"), unique("group"), session_ms=6000
    )
