"""The replication fault suite: per module, a ZooKeeper and three brokers behind fault-injecting proxies.

Every topic has replication factor 3 and ``min.insync.replicas=2``; the
internal topics too (``offsets.topic.replication.factor=3``,
``transaction.state.log.replication.factor=3``,
``transaction.state.log.min.isr=2``). Timeouts are shortened where Kafka's
defaults would make the suite slow: ZooKeeper sessions expire after 6 s
(``zookeeper.session.timeout.ms``, Kafka: 18 s), a follower leaves the ISR
after 4 s without catching up (``replica.lag.time.max.ms``, Kafka: 30 s),
and a follower that lost its leader retries after 200 ms
(``replica.fetch.backoff.ms``, Kafka: 1 s).

The run's size comes from ``SPATE_FAULT_ROUNDS``
(:mod:`tests.support.faults.scale`); the random choices (which partition's
leader to kill) from a seed that is printed, ``SPATE_TEST_SEED`` replays it.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator

import pytest

from tests.support.broker_under_test import require_spate
from tests.support.faults import FaultCluster, running_fault_cluster
from tests.support.faults.figures import RECORDED
from tests.support.faults.scale import SEED_ENV, FaultScale
from tests.support.zookeeper import ZooKeeperForTests, running_zookeeper

FAULT_BROKER_SETTINGS = {
    "min.insync.replicas": "2",
    "unclean.leader.election.enable": "false",
    "replica.lag.time.max.ms": "4000",
    "replica.fetch.backoff.ms": "200",
    "offsets.topic.replication.factor": "3",
    "offsets.topic.num.partitions": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "transaction.state.log.num.partitions": "3",
    "group.initial.rebalance.delay.ms": "100",
}


def pytest_terminal_summary(terminalreporter) -> None:
    if RECORDED:
        terminalreporter.section("replication fault figures")
        for figures in RECORDED:
            terminalreporter.write_line(figures.line())


@pytest.fixture(scope="session")
def scale() -> FaultScale:
    return FaultScale.from_environment()


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> random.Random:
    seed = int(os.environ.get(SEED_ENV, random.randrange(2**32)))
    print(f"{request.node.name}: seed {seed} (replay with {SEED_ENV}={seed})")
    return random.Random(seed)


@pytest.fixture(scope="module")
def zookeeper(broker_kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperForTests]:
    require_spate(broker_kind, "the fault suite runs a ZooKeeper cluster of Spate brokers")
    with running_zookeeper(tmp_path_factory.mktemp("zookeeper")) as harness:
        yield harness


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, zookeeper: ZooKeeperForTests) -> Iterator[FaultCluster]:
    with running_fault_cluster(tmp_path_factory.mktemp("faults"), zookeeper, brokers=3,
                               overrides=dict(FAULT_BROKER_SETTINGS)) as running:
        running.wait_for(running.controller_id, "a controller to be elected")
        running.wait_for_metadata()
        yield running
