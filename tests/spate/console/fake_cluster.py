"""A ClusterView stand-in with fixed answers, for testing pages and endpoints without a broker."""

from __future__ import annotations

from dataclasses import dataclass, field

from spate.client import TopicPartition
from spate.client.admin.admin_types import (
    BrokerDescription,
    ClusterDescription,
    ConfigEntry,
    GroupDescription,
    MemberDescription,
    PartitionDescription,
    TopicDescription,
)
from spate.client.consumer.consumer_record import ConsumerRecord
from spate.console.cluster_view import Overview, PartitionLag, PartitionState
from spate.records.record import TimestampType

HOSTILE = "<img src=x onerror=alert(1)>"


@dataclass
class FakeCluster:
    deleted: list[str] = field(default_factory=list)
    created: list[tuple] = field(default_factory=list)
    resets: list[tuple] = field(default_factory=list)
    lag: int = 5

    def _topics(self) -> dict[str, TopicDescription]:
        return {
            "orders": TopicDescription("orders", (
                PartitionDescription(0, 1, 0, (1, 2), (1, 2)),
                PartitionDescription(1, 2, 0, (2, 1), (2,)),
            )),
        }

    def overview(self) -> Overview:
        brokers = (BrokerDescription(1, "h1", 9092), BrokerDescription(2, "h2", 9092, rack="r<1>"))
        return Overview(ClusterDescription("cid", 1, brokers), self._topics())

    def topics(self) -> dict[str, TopicDescription]:
        return self._topics()

    def topic(self, name: str) -> TopicDescription:
        return self._topics()[name]

    def partitions(self, topic: TopicDescription) -> list[PartitionState]:
        return [PartitionState(p.partition, p.leader, p.replicas, p.isr, (), 0, 10, 4096 if p.partition == 0 else None)
                for p in topic.partitions]

    def topic_configs(self, name: str) -> list[ConfigEntry]:
        return [ConfigEntry("cleanup.policy", "delete")]

    def create_topic(self, name, partitions, replication_factor, configs) -> None:
        self.created.append((name, partitions, replication_factor, dict(configs)))

    def delete_topic(self, name: str) -> None:
        self.deleted.append(name)

    def read_records(self, topic, partition, *, offset=None, timestamp_ms=None, limit=50, wait_ms=1000):
        record = ConsumerRecord(topic, partition, 7, 1_700_000_000_000, TimestampType.CREATE_TIME,
                                HOSTILE.encode(), b'{"n":1}', (("h", b"\x00\x01"),))
        return [record], 7

    def groups(self) -> dict[str, GroupDescription]:
        return {"g<1>": self.group("g<1>")}

    def group(self, group_id: str) -> GroupDescription:
        return GroupDescription(group_id, "Empty", "consumer", "range", ())

    def group_lag(self, group_id: str) -> list[PartitionLag]:
        return [PartitionLag("orders", 0, 10 - self.lag, 10, None), PartitionLag("orders", 1, None, 10, None)]

    def log_bounds(self, tps):
        return {tp: 2 for tp in tps}, {tp: 10 for tp in tps}

    def reset_offsets(self, group_id: str, offsets: dict[TopicPartition, int]) -> None:
        self.resets.append((group_id, dict(offsets)))


def busy_group(group_id: str) -> GroupDescription:
    return GroupDescription(group_id, "Stable", "consumer", "range", (MemberDescription("m-1", "c", "/h"),))
