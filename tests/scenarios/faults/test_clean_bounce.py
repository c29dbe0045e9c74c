"""Leaders bounce cleanly (SIGTERM, controlled shutdown) again and again: nothing is lost, the producer barely waits.

Each round picks a random partition and stops its leader with SIGTERM: the
broker asks the controller to move its leaderships to other in-sync
replicas first, then stops. It starts again with the same data 2 s after it
stopped; the next round begins once every replica is back in the ISR. The
criteria are those of the crash loop (nothing acknowledged lost, nothing
duplicated, order kept, identical replicas below the high watermark), and
the producer must not have gone more than a short pause without an
acknowledgement on any partition: leadership moved before the broker went.

Figures: as the crash loop's; the producer pause is the longest time any
partition went without an acknowledgement from the SIGTERM until the broker
was back in the ISR.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.faults.leadership import led_by, partition_state, wait_for_new_leaders, wait_until_in_sync
from tests.support.faults.scale import FaultScale
from tests.support.faults.scenario import PARTITIONS, start_scenario

RESTART_DELAY_S = 2.0
# A clean bounce moves leadership before the broker stops: the producer sees a metadata refresh and a retry.
MAX_PRODUCER_PAUSE_S = 5.0

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240 + 40 * FaultScale.from_environment().rounds)]


def test_leaders_bounced_cleanly_lose_nothing_and_pause_the_producer_briefly(cluster, scale, rng,
                                                                              topic_name) -> None:
    with start_scenario(cluster, topic_name(), "clean bounce loop") as scenario, ThreadPoolExecutor(1) as watcher:
        topic, figures = scenario.topic, scenario.figures
        for _ in range(scale.rounds):
            victim = partition_state(cluster, topic, rng.randrange(PARTITIONS)).leader
            led = led_by(cluster, [topic], victim)
            stopped_at = time.monotonic()
            new_leaders = watcher.submit(wait_for_new_leaders, cluster, led, stopped_at)
            assert cluster.stop(victim) == 0, cluster.broker(victim).log_tail()
            figures.to_new_leader_s.append(new_leaders.result())
            time.sleep(RESTART_DELAY_S)
            restarted_at = time.monotonic()
            cluster.restart(victim)
            figures.to_in_sync_s.append(wait_until_in_sync(cluster, [topic], since=restarted_at))
            scenario.workload.wait_for_acks(PARTITIONS * 20)
            figures.producer_pause_s.append(scenario.workload.longest_pause(stopped_at, time.monotonic()))
            figures.faults += 1
        scenario.finish()
        longest = max(figures.producer_pause_s)
        assert longest <= MAX_PRODUCER_PAUSE_S, f"the producer waited {longest:.2f}s for an acknowledgement"
