"""A leader cut off from the other brokers and from ZooKeeper, while clients still reach it: nothing is lost.

The leader of a random partition is isolated by the harness's proxies: the
other brokers no longer reach its replication listener nor it theirs, and
its ZooKeeper connection is reset and refused, but its client listener
still answers. Its session expires, the controller elects new leaders from
the ISR, the producer moves to them. Meanwhile the isolated broker still
believes it leads; an acks=all write sent straight to it must not be
acknowledged (no follower fetches from it: its high watermark cannot pass
the write). After the network heals it registers again, rejoins as a
follower, truncates whatever only it held, and the usual criteria hold:
nothing acknowledged lost, nothing duplicated, order kept, identical
replicas below the high watermark.

Figures: as the other loops', plus each isolated leader's answer to the
write sent to it.
"""

from __future__ import annotations

import time

import pytest

from spate.protocol.errors import ErrorCode
from tests.support.faults.leadership import led_by, partition_state, wait_for_new_leaders, wait_until_in_sync
from tests.support.faults.scale import FaultScale
from tests.support.faults.scenario import PARTITIONS, start_scenario
from tests.support.faults.stale_write import StaleWrite, held_by

# Values acknowledged by the new leaders while the old one is still cut off.
ACKS_WHILE_ISOLATED = 200
# How long the isolated broker may wait for followers before it answers the write sent to it.
STALE_WRITE_TIMEOUT_MS = 5_000

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240 + 60 * FaultScale.from_environment().episodes)]


def test_a_leader_partitioned_from_brokers_and_zookeeper_loses_no_acknowledged_write(cluster, scale, rng,
                                                                                    topic_name) -> None:
    with start_scenario(cluster, topic_name(), "partitioned leader") as scenario:
        topic, figures = scenario.topic, scenario.figures
        answers = []
        for _ in range(scale.episodes):
            partition = rng.randrange(PARTITIONS)
            isolated = partition_state(cluster, topic, partition).leader
            led = led_by(cluster, [topic], isolated)
            cut_at = time.monotonic()
            cluster.isolate(isolated)
            try:
                figures.to_new_leader_s.append(wait_for_new_leaders(cluster, led, cut_at))
                scenario.workload.wait_for_acks(ACKS_WHILE_ISOLATED)
                stale = StaleWrite.send(cluster.address(isolated), topic, partition, timeout_ms=STALE_WRITE_TIMEOUT_MS)
                answer = stale.answer()
                answers.append(answer.name)
                assert answer is not ErrorCode.NONE, f"the isolated leader {isolated} acknowledged a write"
            finally:
                healed_at = time.monotonic()
                cluster.heal(isolated)
            figures.to_in_sync_s.append(wait_until_in_sync(cluster, [topic], since=healed_at))
            cluster.wait_for(lambda: not held_by(stale.value, cluster.partition_dirs(topic, partition)),
                             f"the write sent to the isolated broker {isolated} to leave its log")
            figures.producer_pause_s.append(scenario.workload.longest_pause(cut_at, time.monotonic()))
            figures.faults += 1
        figures.extra.update(stale_answers=answers)
        scenario.finish()
