"""Which partitions a source reads: ``subscribe``, ``subscribePattern`` or ``assign``.

Resolution is pure: it takes the cluster's topics (name -> partition count)
and answers the partitions to read now. The streaming source resolves again
before every micro-batch, so partitions added to a subscribed topic and new
topics matching a pattern are picked up; a topic that does not exist yet
simply contributes nothing until it does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from spate.client import TopicPartition


@dataclass(frozen=True, slots=True)
class Subscribe:
    """Every partition of these topics."""

    topics: tuple[str, ...]

    def partitions(self, topics: Mapping[str, int]) -> set[TopicPartition]:
        return {TopicPartition(name, p) for name in self.topics for p in range(topics.get(name, 0))}

    def describe(self) -> str:
        return f"subscribe={','.join(self.topics)}"


@dataclass(frozen=True, slots=True)
class SubscribePattern:
    """Every partition of every non-internal topic whose whole name matches ``pattern``."""

    pattern: str

    def partitions(self, topics: Mapping[str, int]) -> set[TopicPartition]:
        regex = re.compile(self.pattern)
        return {
            TopicPartition(name, p)
            for name, count in topics.items()
            if not is_internal_topic(name) and regex.fullmatch(name)
            for p in range(count)
        }

    def describe(self) -> str:
        return f"subscribePattern={self.pattern}"


@dataclass(frozen=True, slots=True)
class Assign:
    """Exactly these partitions; ones that do not exist (yet) are left out."""

    assigned: tuple[TopicPartition, ...]

    def partitions(self, topics: Mapping[str, int]) -> set[TopicPartition]:
        return {tp for tp in self.assigned if tp.partition < topics.get(tp.topic, 0)}

    def describe(self) -> str:
        return f"assign={','.join(str(tp) for tp in self.assigned)}"


ConsumerStrategy = Subscribe | SubscribePattern | Assign


def is_internal_topic(name: str) -> bool:
    """Kafka's internal topics (``__consumer_offsets``, ``__transaction_state``) start with two underscores."""
    return name.startswith("__")
