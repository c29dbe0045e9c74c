"""`spate topics describe` shows a partition's ISR shrink while a replica's broker is down, and heal after."""

from __future__ import annotations

from spate.protocol.errors import ErrorCode
from tests.spate.cli.conftest import spate
from tests.spate.cli.output import json_lines
from tests.support.admin_requests import create_topic, produce_one
from tests.support.cluster import ClusterForTests


def _isr(cluster: ClusterForTests, topic: str) -> list[int]:
    result = spate("topics", "describe", topic, "--output", "json", bootstrap=cluster.bootstrap)
    assert result.returncode == 0, result
    (document,) = json_lines(result.stdout)
    (partition,) = document["partitions"]
    return sorted(partition["isr"])


def test_the_isr_shrinks_while_a_broker_is_down_and_heals_when_it_is_back(healthy: ClusterForTests, topic_name):
    cluster, topic = healthy, topic_name()
    assert create_topic(cluster.address(1), topic, assignment={0: [1, 2, 3]}).error_code == ErrorCode.NONE
    cluster.wait_for_metadata([topic])
    cluster.wait_for(lambda: _isr(cluster, topic) == [1, 2, 3], "every replica in sync")
    cluster.kill(3)
    cluster.wait_for(lambda: _isr(cluster, topic) == [1, 2], "broker 3 to leave the ISR")
    assert produce_one(cluster.address(1), topic).error_code == ErrorCode.NONE
    cluster.restart(3, clean=False)
    cluster.wait_for(lambda: _isr(cluster, topic) == [1, 2, 3], "broker 3 to catch up and rejoin the ISR")
