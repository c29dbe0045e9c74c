"""What the console shows, read from the cluster through Spate's admin client and consumer.

One :class:`ClusterView` serves every request of the console; its admin
client is shared behind a lock, and each message-browser read uses a
short-lived consumer of its own (no group: it commits nothing).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Mapping, TypeVar

from spate.client import EARLIEST, LATEST, Admin, Consumer, NewTopic, TopicPartition, UnsupportedApiError
from spate.client.admin.admin_types import (
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    GroupDescription,
    TopicDescription,
)
from spate.client.consumer.consumer_record import ConsumerRecord
from spate.protocol import KafkaError

T = TypeVar("T")
BROWSE_LIMIT_MAX = 500


@dataclass(frozen=True, slots=True)
class PartitionState:
    """One partition as the topic page shows it."""

    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...]
    earliest: int | None
    latest: int | None
    # Bytes of the leader's log on disk (DescribeLogDirs); None when the leader cannot tell.
    size_bytes: int | None = None

    @property
    def under_replicated(self) -> bool:
        return len(self.isr) < len(self.replicas)

    @property
    def records(self) -> int | None:
        if self.earliest is None or self.latest is None:
            return None
        return self.latest - self.earliest


@dataclass(frozen=True, slots=True)
class Overview:
    cluster: ClusterDescription
    topics: dict[str, TopicDescription]

    @property
    def partition_count(self) -> int:
        return sum(len(t.partitions) for t in self.topics.values())

    @property
    def under_replicated(self) -> list[tuple[str, int]]:
        return [(t.name, p.partition) for t in self.topics.values() for p in t.partitions if len(p.isr) < len(p.replicas)]

    @property
    def offline(self) -> list[tuple[str, int]]:
        return [(t.name, p.partition) for t in self.topics.values() for p in t.partitions if p.leader < 0]


@dataclass(frozen=True, slots=True)
class PartitionLag:
    """A group's position on one partition: its committed offset (None: none yet), the log end and the lag."""

    topic: str
    partition: int
    committed: int | None
    log_end: int | None
    owner: str | None

    @property
    def lag(self) -> int | None:
        if self.log_end is None or self.committed is None:
            return None
        return max(0, self.log_end - self.committed)

    def to_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "partition": self.partition, "committed": self.committed,
                "log_end": self.log_end, "lag": self.lag, "owner": self.owner}


class ClusterView:
    """The console's one way to the cluster."""

    def __init__(self, bootstrap_servers: str, client_options: Mapping[str, Any] | None = None,
                 *, api_timeout_ms: int = 15_000) -> None:
        self._bootstrap = bootstrap_servers
        self._options = {"client_id": "spate-console", **(client_options or {})}
        self._timeout_ms = api_timeout_ms
        self._admin = Admin(bootstrap_servers, default_api_timeout_ms=api_timeout_ms,
                            request_timeout_ms=api_timeout_ms, **self._options)
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._admin.close()

    def _call(self, operation: Callable[[Admin], T]) -> T:
        with self._lock:
            return operation(self._admin)

    # --- cluster and topics ---------------------------------------------------------------------

    def overview(self) -> Overview:
        return self._call(lambda a: Overview(a.describe_cluster(), a.describe_topics(None)))

    def topics(self, *, include_internal: bool = True) -> dict[str, TopicDescription]:
        described = self._call(lambda a: a.describe_topics(None))
        return {n: t for n, t in described.items() if include_internal or not t.is_internal}

    def topic(self, name: str) -> TopicDescription:
        return self._call(lambda a: a.describe_topics([name]))[name]

    def partitions(self, topic: TopicDescription) -> list[PartitionState]:
        tps = [TopicPartition(topic.name, p.partition) for p in topic.partitions]
        earliest, latest = self._offsets(tps)
        sizes = self._sizes([tp for tp, p in zip(tps, topic.partitions) if p.leader >= 0])
        return [
            PartitionState(p.partition, p.leader, p.replicas, p.isr, p.offline_replicas, earliest.get(tp),
                           latest.get(tp), sizes.get(tp))
            for tp, p in zip(tps, topic.partitions)
        ]

    def _sizes(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        if not tps:
            return {}
        try:
            return self._call(lambda a: a.partition_sizes(tps))
        except (KafkaError, UnsupportedApiError):
            return {}  # a broker without DescribeLogDirs: the page shows no sizes

    def _offsets(self, tps: list[TopicPartition]) -> tuple[dict[TopicPartition, int], dict[TopicPartition, int]]:
        if not tps:
            return {}, {}

        def ask(admin: Admin, spec: int) -> dict[TopicPartition, int]:
            found = admin.list_offsets({tp: spec for tp in tps})
            return {tp: o.offset for tp, o in found.items() if o is not None}

        return self._call(lambda a: (ask(a, EARLIEST), ask(a, LATEST)))

    def topic_configs(self, name: str) -> list[ConfigEntry]:
        resource = ConfigResource.topic(name)
        entries = self._call(lambda a: a.describe_configs([resource]))[resource]
        return sorted(entries.values(), key=lambda e: e.name)

    def create_topic(self, name: str, partitions: int, replication_factor: int, configs: Mapping[str, str]) -> None:
        topic = NewTopic(name, partitions, replication_factor, dict(configs))
        self._call(lambda a: a.create_topics([topic]))

    def delete_topic(self, name: str) -> None:
        self._call(lambda a: a.delete_topics([name]))

    # --- records --------------------------------------------------------------------------------

    def read_records(self, topic: str, partition: int, *, offset: int | None = None, timestamp_ms: int | None = None,
                     limit: int = 50, wait_ms: int = 1000) -> tuple[list[ConsumerRecord], int]:
        """Up to ``limit`` records of one partition from ``offset`` (or the first at ``timestamp_ms``).

        Returns the records and the offset to continue from. No offset and no
        timestamp reads the last ``limit`` records.
        """
        tp = TopicPartition(topic, partition)
        limit = max(1, min(limit, BROWSE_LIMIT_MAX))
        earliest, latest = self._offsets([tp])
        start_of_log, end = earliest.get(tp, 0), latest.get(tp, 0)
        if timestamp_ms is not None:
            found = self._call(lambda a: a.list_offsets({tp: timestamp_ms}))[tp]
            start = end if found is None else found.offset
        elif offset is None:
            start = max(start_of_log, end - limit)
        else:
            start = min(max(offset, start_of_log), end)
        if start >= end:
            return [], start
        with Consumer(self._bootstrap, auto_offset_reset="earliest", request_timeout_ms=self._timeout_ms,
                      **self._options) as consumer:
            consumer.assign([tp])
            consumer.seek(tp, start)
            return _poll_up_to(consumer, limit, end, wait_ms), start

    # --- groups ---------------------------------------------------------------------------------

    def groups(self) -> dict[str, GroupDescription]:
        def describe(admin: Admin) -> dict[str, GroupDescription]:
            ids = [g.group_id for g in admin.list_groups()]
            return admin.describe_groups(ids) if ids else {}

        return self._call(describe)

    def group(self, group_id: str) -> GroupDescription:
        return self._call(lambda a: a.describe_groups([group_id]))[group_id]

    def group_lag(self, group_id: str) -> list[PartitionLag]:
        """Committed offset, log end and lag of every partition the group owns or has committed."""
        description = self.group(group_id)
        committed = self._call(lambda a: a.list_group_offsets(group_id))
        owners = {tp: m.member_id for m in description.members for tp in m.assignment}
        tps = sorted(set(committed) | set(owners), key=lambda tp: (tp.topic, tp.partition))
        _, latest = self._offsets(tps)
        return [
            PartitionLag(tp.topic, tp.partition, committed[tp].offset if tp in committed else None,
                         latest.get(tp), owners.get(tp))
            for tp in tps
        ]

    def reset_offsets(self, group_id: str, offsets: Mapping[TopicPartition, int]) -> None:
        self._call(lambda a: a.alter_group_offsets(group_id, dict(offsets)))

    def log_bounds(self, tps: list[TopicPartition]) -> tuple[dict[TopicPartition, int], dict[TopicPartition, int]]:
        """The earliest and latest offsets of each partition."""
        return self._offsets(tps)


def _poll_up_to(consumer: Consumer, limit: int, end: int, wait_ms: int) -> list[ConsumerRecord]:
    records: list[ConsumerRecord] = []
    for _ in range(20):  # bounded: a few polls fill a page or reach the end
        batch = consumer.poll(timeout_ms=wait_ms / 4, max_records=limit - len(records))
        records.extend(batch)
        if len(records) >= limit or (records and records[-1].offset + 1 >= end):
            break
        if not batch and records:
            break
    return records[:limit]
