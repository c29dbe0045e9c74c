"""The client's cached view of the cluster: brokers, topics, partition leaders.

A :class:`ClusterSnapshot` is immutable and replaced whole on every refresh,
so a thread that reads ``metadata.snapshot`` once works with one consistent
view while another thread refreshes it. :class:`Metadata` decides when a
refresh is due: when asked (after NOT_LEADER_OR_FOLLOWER,
UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE, a lost connection, a topic
the cache does not know yet) or when the snapshot is older than
``metadata_max_age_ms``; never more often than the retry backoff allows.
"""

from __future__ import annotations

import math
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

from spate.client.net.descriptions import (
    BrokerDescription,
    ClusterDescription,
    PartitionDescription,
    TopicDescription,
)
from spate.protocol.errors import ErrorCode
from spate.structs import TopicPartition

# Topic-level errors after which the topic's partitions are still described.
_DESCRIBED_TOPIC_ERRORS = frozenset({ErrorCode.NONE, ErrorCode.LEADER_NOT_AVAILABLE})

NO_LEADER = -1

# Answers about a partition after which its leader may have moved: worth a metadata refresh.
LEADER_MOVED_ERRORS = frozenset(
    {
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        ErrorCode.KAFKA_STORAGE_ERROR,
    }
)


@dataclass(frozen=True)
class ClusterSnapshot:
    """One metadata response, indexed for fast lookups."""

    cluster_id: str | None = None
    controller_id: int = -1
    brokers: Mapping[int, BrokerDescription] = field(default_factory=dict)
    topics: Mapping[str, TopicDescription] = field(default_factory=dict)
    topic_errors: Mapping[str, ErrorCode] = field(default_factory=dict)
    # topic -> leader id per partition index; -1 where there is no leader.
    _leaders: Mapping[str, tuple[int, ...]] = field(default_factory=dict, repr=False)
    _available: Mapping[str, tuple[int, ...]] = field(default_factory=dict, repr=False)

    def partition_count(self, topic: str) -> int | None:
        leaders = self._leaders.get(topic)
        return None if leaders is None else len(leaders)

    def leader(self, topic: str, partition: int) -> int:
        """The leader's node id, or -1 when the partition or its leader is unknown."""
        leaders = self._leaders.get(topic)
        if leaders is None or not 0 <= partition < len(leaders):
            return NO_LEADER
        return leaders[partition]

    def leader_epoch(self, topic: str, partition: int) -> int:
        description = self.topics.get(topic)
        if description is None or not 0 <= partition < len(description.partitions):
            return -1
        return description.partitions[partition].leader_epoch

    def available_partitions(self, topic: str) -> tuple[int, ...]:
        """Partitions of ``topic`` that have a leader."""
        return self._available.get(topic, ())

    def by_leader(
        self, partitions: Iterable[TopicPartition]
    ) -> tuple[dict[int, list[TopicPartition]], list[TopicPartition]]:
        """``partitions`` grouped by their leader's node id, and those whose leader is unknown (both in order)."""
        led: dict[int, list[TopicPartition]] = defaultdict(list)
        leaderless: list[TopicPartition] = []
        for tp in partitions:
            leader = self.leader(tp.topic, tp.partition)
            if leader >= 0:
                led[leader].append(tp)
            else:
                leaderless.append(tp)
        return dict(led), leaderless

    def broker(self, node_id: int) -> BrokerDescription | None:
        return self.brokers.get(node_id)

    def describe_cluster(self) -> ClusterDescription:
        brokers = tuple(self.brokers[node] for node in sorted(self.brokers))
        return ClusterDescription(self.cluster_id, self.controller_id, brokers)


EMPTY_SNAPSHOT = ClusterSnapshot()


def snapshot_from_response(body: Any) -> ClusterSnapshot:
    """Index a MetadataResponse body.

    Topics answered with UNKNOWN_TOPIC_OR_PARTITION (or any error other than
    LEADER_NOT_AVAILABLE) land in ``topic_errors`` and not in ``topics``. A
    topic whose partition numbers are not 0..n-1 is treated as erroneous.
    """
    brokers = {
        b.node_id: BrokerDescription(b.node_id, b.host, b.port, b.rack) for b in body.brokers
    }
    topics: dict[str, TopicDescription] = {}
    errors: dict[str, ErrorCode] = {}
    leaders: dict[str, tuple[int, ...]] = {}
    available: dict[str, tuple[int, ...]] = {}
    for topic in body.topics:
        code = ErrorCode.of(topic.error_code)
        partitions = sorted(topic.partitions, key=lambda p: p.partition_index)
        if code not in _DESCRIBED_TOPIC_ERRORS or (code != ErrorCode.NONE and not partitions):
            errors[topic.name] = code
            continue
        if [p.partition_index for p in partitions] != list(range(len(partitions))):
            errors[topic.name] = ErrorCode.LEADER_NOT_AVAILABLE
            continue
        described = tuple(
            PartitionDescription(
                partition=p.partition_index,
                leader=p.leader_id if p.error_code in (ErrorCode.NONE, ErrorCode.REPLICA_NOT_AVAILABLE) else NO_LEADER,
                leader_epoch=p.leader_epoch,
                replicas=tuple(p.replica_nodes),
                isr=tuple(p.isr_nodes),
                offline_replicas=tuple(p.offline_replicas),
            )
            for p in partitions
        )
        topics[topic.name] = TopicDescription(topic.name, described, bool(topic.is_internal))
        leaders[topic.name] = tuple(p.leader for p in described)
        available[topic.name] = tuple(p.partition for p in described if p.leader >= 0)
    return ClusterSnapshot(
        cluster_id=body.cluster_id,
        controller_id=body.controller_id,
        brokers=MappingProxyType(brokers),
        topics=MappingProxyType(topics),
        topic_errors=MappingProxyType(errors),
        _leaders=MappingProxyType(leaders),
        _available=MappingProxyType(available),
    )


class Metadata:
    """When to refresh, which topics to ask about, and the latest snapshot.

    Thread-safe: the producer's application threads read the snapshot and
    wait for refreshes while its sender thread performs them.
    """

    def __init__(
        self,
        *,
        max_age: float,
        refresh_backoff: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_age = max_age
        self.refresh_backoff = refresh_backoff
        self._clock = clock
        self.snapshot: ClusterSnapshot = EMPTY_SNAPSHOT
        self._topics: frozenset[str] = frozenset()
        self._need_update = True
        self._last_refresh = -math.inf
        self._last_attempt = -math.inf
        self._version = 0
        self._changed = threading.Condition()

    @property
    def topics(self) -> frozenset[str]:
        """The topics refreshes ask about."""
        return self._topics

    @property
    def version(self) -> int:
        """Bumped by every refresh, successful or not."""
        return self._version

    def add_topics(self, topics: Iterable[str]) -> bool:
        """Also ask about ``topics``; True (and a refresh requested) if any were new."""
        with self._changed:
            new = frozenset(topics) - self._topics
            if not new:
                return False
            self._topics = self._topics | new
            self._need_update = True
            # A new topic is a new question, not a retry: ask at once, as Kafka's requestUpdateForNewTopics does.
            self._last_attempt = -math.inf
            return True

    def set_topics(self, topics: Iterable[str]) -> None:
        with self._changed:
            wanted = frozenset(topics)
            if wanted != self._topics:
                self._topics = wanted
                self._need_update = True

    def request_update(self) -> None:
        self._need_update = True

    @property
    def update_requested(self) -> bool:
        return self._need_update

    def time_to_update(self, now: float) -> float:
        """Seconds until a refresh is due (0: now)."""
        due = now if self._need_update else self._last_refresh + self.max_age
        return max(0.0, due - now, self._last_attempt + self.refresh_backoff - now)

    def attempted(self, now: float) -> None:
        """A refresh request was sent; the backoff runs from here."""
        self._last_attempt = now

    def update(self, snapshot: ClusterSnapshot, now: float) -> None:
        with self._changed:
            self.snapshot = snapshot
            self._last_refresh = now
            # Topics the client asked about but the broker could not place yet
            # (auto-creation in progress, no leader) keep refreshes coming.
            self._need_update = any(
                topic not in snapshot.topics or len(snapshot.available_partitions(topic)) < (snapshot.partition_count(topic) or 0)
                for topic in self._topics
            )
            self._version += 1
            self._changed.notify_all()

    def failed(self, now: float) -> None:
        """A refresh failed; waiters wake up to check their deadlines."""
        with self._changed:
            self._last_attempt = now
            self._need_update = True
            self._version += 1
            self._changed.notify_all()

    def wait_for_change(self, seen_version: int, timeout: float) -> bool:
        """Block until a refresh after ``seen_version`` (True) or ``timeout`` seconds pass (False)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._version != seen_version, timeout)
