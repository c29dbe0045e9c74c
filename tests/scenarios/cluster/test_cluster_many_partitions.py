"""A topic of thousands of partitions in a three-broker cluster: every broker keeps answering its clients
while the controller's LeaderAndIsr opens the partitions (and its StopReplica deletes them), and the topic
ends up led everywhere.

Each broker hosts about 1,300 of the 2,000 × 2 replicas: opened in one go, that holds a broker's event loop
for seconds; applied in slices, a client's ApiVersions and Metadata answer within a fraction of that.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field

from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.api_versions import ApiVersionsRequest
from spate.protocol.messages.list_offsets import ListOffsetsRequest
from tests.support.admin_requests import create_topic, delete_topic
from tests.support.cluster import ClusterForTests
from tests.support.controller_requests import call

E = ErrorCode
PARTITIONS = 2000
REPLICATION_FACTOR = 2
# Each broker hosts ~1,300 replicas: far below max.broker.partitions.
SLOWEST_ANSWER_S = 1.0
CHANGE_TIMEOUT_S = 240.0
# Admin requests answer REQUEST_TIMED_OUT before the test's socket gives up (30 s); the change goes on.
ADMIN_TIMEOUT_MS = 20000
LATEST = -1
API_VERSIONS_VERSION = 2
# Answers each broker gives before a probe stops: a change quicker than that is probed until they are in.
MIN_ANSWERS = 5


@dataclass
class ResponsivenessProbe:
    """A client on another thread that keeps asking every broker for ApiVersions and Metadata, timing each."""

    cluster: ClusterForTests
    slowest: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    answered: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    failures: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="responsiveness-probe", daemon=True)

    def __enter__(self) -> ResponsivenessProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        deadline = time.monotonic() + 30
        while min((self.answered[b] for b in self.cluster.live_ids()), default=0) < MIN_ANSWERS \
                and time.monotonic() < deadline and self._thread.is_alive():
            time.sleep(0.05)
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        deadline = time.monotonic() + CHANGE_TIMEOUT_S * 2
        while not self._stop.is_set() and time.monotonic() < deadline:
            for broker_id in self.cluster.live_ids():
                for ask in (self._api_versions, self._metadata):
                    started = time.monotonic()
                    try:
                        ask(broker_id)
                    except (OSError, ConnectionError, AssertionError) as exc:
                        self.failures.append(f"broker {broker_id}: {exc}")
                        continue
                    self.slowest[broker_id] = max(self.slowest[broker_id], time.monotonic() - started)
                    self.answered[broker_id] += 1
            self._stop.wait(0.02)

    def _api_versions(self, broker_id: int) -> None:
        answer = call(self.cluster.address(broker_id), ApiKey.API_VERSIONS, API_VERSIONS_VERSION, ApiVersionsRequest(),
                      timeout=CHANGE_TIMEOUT_S)
        assert answer.error_code == E.NONE

    def _metadata(self, broker_id: int) -> None:
        answer = self.cluster.metadata(broker_id, [])
        assert len(answer.brokers) == len(self.cluster.live_ids())

    def assert_responsive(self, what: str) -> None:
        assert not self.failures, f"requests failed while {what}: {self.failures[:3]}"
        for broker_id in self.cluster.live_ids():
            answered = self.answered[broker_id]
            assert answered >= MIN_ANSWERS, f"broker {broker_id} answered only {answered} time(s) while {what}"
            assert self.slowest[broker_id] < SLOWEST_ANSWER_S, (
                f"broker {broker_id} took {self.slowest[broker_id]:.2f}s to answer while {what}"
            )


def led_partitions(cluster: ClusterForTests, topic: str) -> set[int]:
    """The partitions of ``topic`` whose leader (as metadata names it) answers ListOffsets for them."""
    by_leader: dict[int, list[int]] = defaultdict(list)
    for partition in cluster.metadata(cluster.live_ids()[0], [topic]).topics[0].partitions:
        by_leader[partition.leader_id].append(partition.partition_index)
    led = set()
    for leader, indexes in by_leader.items():
        if leader not in cluster.live_ids():
            continue
        Q = ListOffsetsRequest
        body = Q(topics=[Q.ListOffsetsTopic(name=topic, partitions=[
            Q.ListOffsetsPartition(partition_index=i, timestamp=LATEST) for i in indexes])])
        answer = call(cluster.address(leader), ApiKey.LIST_OFFSETS, 4, body)
        led |= {p.partition_index for t in answer.topics for p in t.partitions if p.error_code == E.NONE}
    return led


def partition_dirs(cluster: ClusterForTests, topic: str) -> list[str]:
    return [d.name for b in cluster.live() for d in b.log_dir.glob(f"{topic}-*") if not d.name.endswith("-delete")]


def test_brokers_keep_answering_while_thousands_of_partitions_are_opened_and_deleted(
    cluster: ClusterForTests, topic_name
) -> None:
    topic = topic_name()
    with ResponsivenessProbe(cluster) as probe:
        created = create_topic(cluster.address(1), topic, partitions=PARTITIONS,
                               replication_factor=REPLICATION_FACTOR, timeout_ms=ADMIN_TIMEOUT_MS)
        assert created.error_code in (E.NONE, E.REQUEST_TIMED_OUT), created.error_message
        cluster.wait_for(lambda: len(led_partitions(cluster, topic)) == PARTITIONS,
                         f"every partition of {topic} to be led", CHANGE_TIMEOUT_S)
    probe.assert_responsive(f"{PARTITIONS} partitions were opened")
    assert len(partition_dirs(cluster, topic)) == PARTITIONS * REPLICATION_FACTOR

    with ResponsivenessProbe(cluster) as probe:
        assert delete_topic(cluster.address(2), topic, timeout_ms=ADMIN_TIMEOUT_MS) in (
            E.NONE, E.REQUEST_TIMED_OUT,
        )
        cluster.wait_for(lambda: not partition_dirs(cluster, topic), f"the partitions of {topic} to be deleted",
                         CHANGE_TIMEOUT_S)
    probe.assert_responsive(f"{PARTITIONS} partitions were deleted")
