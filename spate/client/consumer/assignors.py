"""Partition assignors: how a group's leader divides partitions among members.

The leader of a consumer group runs the assignor the coordinator picked
(the first protocol every member supports, by the members' preference)
over every member's subscription. The two here are Kafka's, under Kafka's
protocol names, so that mixed groups with Java, librdkafka or other
clients agree on the result:

* ``range``: per topic, the members subscribed to it (sorted by member id)
  get consecutive ranges of its partitions; the first ``partitions %
  members`` members get one extra. Co-partitioned topics land together.
* ``roundrobin``: every subscribed partition, sorted by topic then number,
  dealt in turn to the members (sorted by member id), skipping members not
  subscribed to the partition's topic.

Pure functions of their inputs: no I/O, same answer on every client.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Mapping, Protocol, Sequence

from spate.client.consumer.consumer_protocol import Subscription
from spate.structs import TopicPartition

Assignment = dict[str, list[TopicPartition]]


class PartitionAssignor(Protocol):
    """``name`` is the protocol name sent in JoinGroup; ``assign`` runs on the leader."""

    name: str

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> Assignment:
        """Partitions for every member (each member present, maybe with none).

        ``partitions_per_topic`` holds the partition count of every subscribed
        topic that exists; topics missing from it are not assigned.
        """
        ...


class RangeAssignor:
    name = "range"

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> Assignment:
        assignment: Assignment = {member: [] for member in subscriptions}
        members_of: dict[str, list[str]] = defaultdict(list)
        for member in sorted(subscriptions):
            for topic in subscriptions[member].topics:
                members_of[topic].append(member)
        for topic in sorted(members_of):
            count = partitions_per_topic.get(topic)
            if not count:
                continue
            members = members_of[topic]
            share, extra = divmod(count, len(members))
            start = 0
            for index, member in enumerate(members):
                length = share + (1 if index < extra else 0)
                assignment[member].extend(TopicPartition(topic, p) for p in range(start, start + length))
                start += length
        return assignment


class RoundRobinAssignor:
    name = "roundrobin"

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> Assignment:
        assignment: Assignment = {member: [] for member in subscriptions}
        members = sorted(subscriptions)
        if not members:
            return assignment
        subscribed = {member: set(subscriptions[member].topics) for member in members}
        topics = sorted({topic for topics in subscribed.values() for topic in topics} & set(partitions_per_topic))
        turn = 0
        for topic in topics:
            for partition in range(partitions_per_topic[topic]):
                # Deal to the next member in the circle that takes this topic.
                for step in range(len(members)):
                    member = members[(turn + step) % len(members)]
                    if topic in subscribed[member]:
                        assignment[member].append(TopicPartition(topic, partition))
                        turn = (turn + step + 1) % len(members)
                        break
        return assignment


BUILT_IN_ASSIGNORS: Mapping[str, PartitionAssignor] = {
    RangeAssignor.name: RangeAssignor(),
    RoundRobinAssignor.name: RoundRobinAssignor(),
}


def resolve_assignors(strategy: str | PartitionAssignor | Sequence[str | PartitionAssignor]) -> list[PartitionAssignor]:
    """Assignors in preference order from names (``"range"``, ``"roundrobin"``), objects, or a list of them."""
    single = isinstance(strategy, str) or hasattr(strategy, "assign")
    items = [strategy] if single else list(strategy)  # type: ignore[arg-type]
    resolved: list[PartitionAssignor] = []
    for item in items:
        if isinstance(item, str):
            for name in item.split(","):
                key = name.strip().lower()
                if key not in BUILT_IN_ASSIGNORS:
                    raise ValueError(
                        f"unknown partition assignment strategy {name.strip()!r}: "
                        f"use one of {sorted(BUILT_IN_ASSIGNORS)}"
                    )
                resolved.append(BUILT_IN_ASSIGNORS[key])
        elif hasattr(item, "assign") and isinstance(getattr(item, "name", None), str):
            resolved.append(item)
        else:
            raise TypeError(f"a partition assignor needs a name and an assign method, not {item!r}")
    names = [assignor.name for assignor in resolved]
    if not resolved or len(set(names)) != len(names):
        raise ValueError(f"partition_assignment_strategy must name distinct assignors, not {names}")
    return resolved
