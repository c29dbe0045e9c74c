"""The README's main job, unchanged, against a three-broker cluster named by one broker only."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

from jobs.quickstart import EVENTS_TOPIC, PARTITIONS
from tests.support.cluster import running_cluster
from tests.support.zookeeper import running_zookeeper

REPO = Path(__file__).resolve().parents[2]


def test_the_quickstart_runs_on_a_cluster_and_its_partitions_are_led_by_every_broker(tmp_path):
    with running_zookeeper(tmp_path / "zookeeper") as zookeeper, \
            running_cluster(tmp_path / "cluster", zookeeper, brokers=3,
                            overrides={"offsets.topic.num.partitions": "3",
                                       "transaction.state.log.num.partitions": "3"}) as cluster:
        cluster.wait_for(cluster.controller_id, "a controller")
        cluster.wait_for_metadata()
        result = subprocess.run(
            [sys.executable, "-m", "jobs.quickstart", "--events", "2000", "--data-dir", str(tmp_path / "job"),
             "--bootstrap-server", cluster.address(2)],
            cwd=REPO, capture_output=True, text=True, timeout=600,
        )
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        assert "2,000 events in, 2,000 counted" in result.stdout
        leaders = Counter(cluster.leader_of(EVENTS_TOPIC, p) for p in range(PARTITIONS))
        assert set(leaders) == {1, 2, 3}
