"""The leader counts the ISR changes it applies: what kafka_server_replicamanager_isrshrinks/isrexpands report."""

from __future__ import annotations

from pathlib import Path

from tests.broker.server.replication_harness import records
from tests.broker.server.test_isr_manager import LAG_MS, Setup


def test_a_lagging_follower_dropped_and_rejoining_counts_one_shrink_and_one_expand(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    partition = s.lead()
    partition.append_records(records(2))
    s.h.clock.now += LAG_MS + 1
    s.shrink()
    assert (s.isr.shrinks, s.isr.expands) == (1, 0)
    partition.update_follower_fetch(2, 2, s.h.clock())
    s.expand(partition, 2)
    assert (s.isr.shrinks, s.isr.expands) == (1, 1)
