"""A log dir fails under a broker with two: its replicas go offline there, the rest of the broker carries on.

Broker 1 keeps its logs in two dirs; a topic has one partition in each, both
led by broker 1, while an idempotent acks=all producer writes throughout.
The dir holding one of them then "loses its disk": nothing new can be
created in it (the test moves it away and puts a file in its place), so the
next segment roll there fails. Broker 1 must stay up, take that replica
offline (KAFKA_STORAGE_ERROR for requests naming it), and tell the
controller, which elects another in-sync replica and drops broker 1 from
the ISR; the partition in the healthy dir stays led by broker 1. Nothing
acknowledged is lost. Once the disk is back and broker 1 restarted, its
replica catches up and rejoins the ISR.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from spate.protocol.errors import ErrorCode
from tests.spate.cli.conftest import spate
from tests.spate.cli.output import json_lines
from tests.support.admin_requests import create_topic, produce_one
from tests.support.cluster import ClusterForTests, settled_cluster
from tests.support.faults.history import check_history
from tests.support.faults.leadership import partition_state, wait_until_in_sync
from tests.support.faults.workload import IdempotentWorkload, read_committed
from tests.support.zookeeper import ZooKeeperForTests

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

VICTIM = 1


@pytest.fixture(scope="module")
def log_dirs(tmp_path_factory) -> list[Path]:
    base = tmp_path_factory.mktemp("victim-disks")
    return [base / "disk-a", base / "disk-b"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, zookeeper: ZooKeeperForTests, log_dirs: list[Path]) -> Iterator[ClusterForTests]:
    with settled_cluster(tmp_path_factory.mktemp("cluster"), zookeeper, brokers=3,
                         overrides={"min.insync.replicas": "2", "replica.lag.time.max.ms": "4000",
                                    "replica.fetch.backoff.ms": "200"},
                         broker_overrides={VICTIM: {"log.dirs": ",".join(map(str, log_dirs))}}) as running:
        yield running


def lose_disk(log_dir: Path) -> None:
    log_dir.rename(log_dir.with_name(log_dir.name + ".away"))
    log_dir.write_text("")


def restore_disk(log_dir: Path) -> None:
    log_dir.unlink()
    log_dir.with_name(log_dir.name + ".away").rename(log_dir)


def offline_replicas(cluster: ClusterForTests, topic: str) -> dict[int, list[int]]:
    result = spate("topics", "describe", topic, "--output", "json", bootstrap=cluster.bootstrap)
    assert result.returncode == 0, result
    (document,) = json_lines(result.stdout)
    return {p["partition"]: p["offline_replicas"] for p in document["partitions"]}


def test_a_failed_log_dir_takes_only_its_replicas_offline_and_loses_nothing(cluster, log_dirs, topic_name):
    topic = topic_name()
    # segment.ms: every append after 200 ms rolls, so the lost disk shows at the next write.
    created = create_topic(cluster.address(VICTIM), topic, assignment={0: [VICTIM, 2, 3], 1: [VICTIM, 3, 2]},
                           configs={"segment.ms": "200"})
    assert created.error_code == ErrorCode.NONE, created
    wait_until_in_sync(cluster, [topic])
    homes = {p: next(d for d in log_dirs if (d / f"{topic}-{p}").is_dir()) for p in (0, 1)}
    assert homes[0] != homes[1], f"both partitions landed in {homes[0]}"
    workload = IdempotentWorkload(cluster.bootstrap, topic, 2, rate=200, max_values=100_000).start()
    try:
        workload.wait_for_acks(200)
        lose_disk(homes[0])
        moved = cluster.wait_for(lambda: (s := partition_state(cluster, topic, 0)).leader not in (VICTIM, -1)
                                 and VICTIM not in s.isr and s, "partition 0 to move off the failed disk")
        assert moved.leader == 2
        workload.wait_for_acks(300)
        history = workload.stop()
    finally:
        if workload.running():
            workload.stop(flush_timeout_s=5)

    assert cluster.broker(VICTIM).exit_code is None, cluster.broker(VICTIM).log_tail()
    healthy = partition_state(cluster, topic, 1)
    assert healthy.leader == VICTIM and VICTIM in healthy.isr
    report = check_history(history, read_committed(cluster.bootstrap, topic, 2))
    assert history.fatal_error is None, history.fatal_error
    assert report.ok, report.summary()
    assert produce_one(cluster.address(VICTIM), topic, 0).error_code == ErrorCode.KAFKA_STORAGE_ERROR
    assert produce_one(cluster.address(VICTIM), topic, 1).error_code == ErrorCode.NONE
    cluster.wait_for(lambda: offline_replicas(cluster, topic) == {0: [VICTIM], 1: []}, "the offline replica in describe")

    assert cluster.stop(VICTIM) == 0, cluster.broker(VICTIM).log_tail()
    restore_disk(homes[0])
    cluster.restart(VICTIM)
    wait_until_in_sync(cluster, [topic])
    assert offline_replicas(cluster, topic) == {0: [], 1: []}
