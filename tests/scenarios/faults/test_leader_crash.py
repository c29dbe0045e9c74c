"""Leaders crash (SIGKILL) again and again under an idempotent acks=all producer: no acknowledged write is lost.

Each round picks a random partition, kills its leader with SIGKILL, and
restarts the broker with the same data 2 s later, or once ZooKeeper has
expired the dead broker's session if that comes later (a broker id cannot
register while its dead predecessor's ephemeral znode stands; Kafka's own
system tests wait for it the same way). The next round starts once every
replica is back in the ISR. At the end the producer must have lost nothing
acknowledged, duplicated nothing, kept each partition's order, and every
replica must hold the same batches below the high watermark.

Figures: values acknowledged, lost, duplicated; seconds from the kill to a
new leader for every partition the victim led (the dead broker's session
expiry, 6 s here, then the controller's election); seconds to be back in
the ISR after the restart; the longest a partition went without an
acknowledgement around each kill.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.faults.leadership import led_by, partition_state, wait_for_new_leaders, wait_until_in_sync
from tests.support.faults.scale import FaultScale
from tests.support.faults.scenario import PARTITIONS, start_scenario

RESTART_DELAY_S = 2.0

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240 + 60 * FaultScale.from_environment().rounds)]


def test_leaders_killed_repeatedly_lose_no_acknowledged_write(cluster, scale, rng, topic_name) -> None:
    with start_scenario(cluster, topic_name(), "leader SIGKILL loop") as scenario, \
            ThreadPoolExecutor(1) as watcher:
        topic, figures = scenario.topic, scenario.figures
        for _ in range(scale.rounds):
            victim = partition_state(cluster, topic, rng.randrange(PARTITIONS)).leader
            led = led_by(cluster, [topic], victim)
            killed_at = time.monotonic()
            cluster.kill(victim)
            new_leaders = watcher.submit(wait_for_new_leaders, cluster, led, killed_at)
            time.sleep(RESTART_DELAY_S)
            cluster.wait_for(lambda: not cluster.registered(victim), f"broker {victim}'s session to expire")
            restarted_at = time.monotonic()
            cluster.restart(victim, clean=False)
            figures.to_new_leader_s.append(new_leaders.result())
            figures.to_in_sync_s.append(wait_until_in_sync(cluster, [topic], since=restarted_at))
            scenario.workload.wait_for_acks(PARTITIONS * 20)
            figures.producer_pause_s.append(scenario.workload.longest_pause(killed_at, time.monotonic()))
            figures.faults += 1
        scenario.finish()
