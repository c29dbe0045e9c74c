"""A broker whose ZooKeeper session expires (paused past the timeout) registers again and its replicas rejoin
the ISR.

Each episode pauses one broker (SIGSTOP; they take turns, so the
controller's turn comes too) until ZooKeeper has expired its session, the
controller has moved what it led, and the leaders of the partitions it
follows have dropped it from their ISRs. On SIGCONT the broker finds its
session gone, registers again on a new one (a new broker epoch: the
registration znode's czxid), and its replicas catch up and rejoin every
ISR. The workload writes throughout; the usual criteria hold at the end.

Figures: as the other loops', plus the seconds from SIGCONT to the new
registration.
"""

from __future__ import annotations

import time

import pytest

from tests.support.faults.leadership import led_by, partition_states, wait_for_new_leaders, wait_until_in_sync
from tests.support.faults.scale import FaultScale
from tests.support.faults.scenario import start_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240 + 60 * FaultScale.from_environment().episodes)]


def test_a_broker_whose_session_expired_registers_again_and_rejoins_every_isr(cluster, scale, rng,
                                                                              topic_name) -> None:
    with start_scenario(cluster, topic_name(), "session expiry") as scenario:
        topic, figures = scenario.topic, scenario.figures
        first = rng.randrange(len(cluster.brokers))
        reregistered = []
        for episode in range(scale.episodes):
            victim = sorted(cluster.brokers)[(first + episode) % len(cluster.brokers)]
            epoch_before = cluster.zk.exists(f"/brokers/ids/{victim}").czxid
            led = led_by(cluster, [topic], victim)
            paused_at = time.monotonic()
            cluster.pause(victim)
            cluster.wait_for(lambda: not cluster.registered(victim), f"paused broker {victim}'s session to expire")
            if led:
                figures.to_new_leader_s.append(wait_for_new_leaders(cluster, led, paused_at))
            cluster.wait_for(lambda: all(victim not in state.isr for state in partition_states(cluster, topic)),
                             f"the ISRs to drop the paused broker {victim}")

            resumed_at = time.monotonic()
            cluster.resume(victim)
            cluster.wait_for(lambda: cluster.registered(victim), f"broker {victim} to register again")
            reregistered.append(round(time.monotonic() - resumed_at, 2))
            epoch_after = cluster.zk.exists(f"/brokers/ids/{victim}").czxid
            assert epoch_after > epoch_before, f"broker {victim} is registered with its old epoch {epoch_before}"
            figures.to_in_sync_s.append(wait_until_in_sync(cluster, [topic], since=resumed_at))
            figures.producer_pause_s.append(scenario.workload.longest_pause(paused_at, time.monotonic()))
            figures.faults += 1
        figures.extra.update(reregistered_s=reregistered)
        scenario.finish()
