"""A zombie leader: paused past its ZooKeeper session, replaced, resumed. It must not take writes with its old
epoch, and it truncates what only it holds when it rejoins as a follower.

The leader of a random partition is paused (SIGSTOP) until ZooKeeper has
expired its session and the controller has elected new leaders for what it
led (while the producer carries on with them). Then, still paused, it is
sent an acks=all write for that partition straight to its client listener
(the kernel queues it): on SIGCONT the first thing the zombie reads is a
write for a partition it still believes it leads. It must not acknowledge
it: no follower fetches from it any more, so its high watermark cannot
pass the write; the answer is an error (the leadership it lost, a timeout,
too few replicas). Whatever it appended meanwhile, with its stale leader
epoch, must be gone once it rejoins as a follower: the stale write is in no
replica's log, the replicas hold identical batches below the high
watermark, and the producer's history is intact.

Figures: as the other loops', plus the stale write's answer and whether the
zombie had appended it before truncating it away.
"""

from __future__ import annotations

import time

import pytest

from spate.protocol.errors import ErrorCode
from tests.support.faults.leadership import led_by, partition_state, wait_for_new_leaders, wait_until_in_sync
from tests.support.faults.scale import FaultScale
from tests.support.faults.scenario import PARTITIONS, start_scenario
from tests.support.faults.stale_write import StaleWrite, held_by

# Values acknowledged by the new leaders while the zombie is still paused.
ACKS_WHILE_PAUSED = 200

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240 + 60 * FaultScale.from_environment().episodes)]


def test_a_resumed_zombie_leader_acknowledges_no_write_and_truncates_on_rejoining(cluster, scale, rng,
                                                                                  topic_name) -> None:
    with start_scenario(cluster, topic_name(), "zombie leader") as scenario:
        topic, figures = scenario.topic, scenario.figures
        answers, appended = [], []
        for _ in range(scale.episodes):
            partition = rng.randrange(PARTITIONS)
            zombie = partition_state(cluster, topic, partition).leader
            led = led_by(cluster, [topic], zombie)
            paused_at = time.monotonic()
            cluster.pause(zombie)
            cluster.wait_for(lambda: not cluster.registered(zombie), f"paused broker {zombie}'s session to expire")
            figures.to_new_leader_s.append(wait_for_new_leaders(cluster, led, paused_at))
            scenario.workload.wait_for_acks(ACKS_WHILE_PAUSED)

            stale = StaleWrite.send(cluster.address(zombie), topic, partition)
            resumed_at = time.monotonic()
            cluster.resume(zombie)
            answer = stale.answer()
            answers.append(answer.name)
            appended.append(bool(held_by(stale.value, cluster.partition_dirs(topic, partition, [zombie]))))
            assert answer is not ErrorCode.NONE, f"the zombie leader {zombie} acknowledged a write"

            figures.to_in_sync_s.append(wait_until_in_sync(cluster, [topic], since=resumed_at))
            cluster.wait_for(lambda: not held_by(stale.value, cluster.partition_dirs(topic, partition)),
                             f"the stale write to leave broker {zombie}'s log")
            figures.producer_pause_s.append(scenario.workload.longest_pause(paused_at, time.monotonic()))
            figures.faults += 1
        figures.extra.update(stale_answers=answers, stale_write_appended=appended)
        scenario.finish()
