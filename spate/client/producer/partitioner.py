"""Choosing a partition for a record sent without one.

:class:`DefaultPartitioner` is Kafka's: a keyed record goes to
``to_positive(murmur2(key)) % num_partitions``, the same partition the Java
client and librdkafka's ``murmur2``/``murmur2_random`` partitioners choose;
a record without a key goes to the topic's current *sticky* partition, which
changes (at random, preferring partitions that have a leader) each time the
batch being filled for it is closed. Sticky partitioning fills batches
instead of spreading a trickle of records over every partition, so batches
are bigger and requests fewer, and over time the load still evens out.
"""

from __future__ import annotations

import random
from typing import Protocol, Sequence, runtime_checkable

from spate.client.producer.murmur2 import partition_for_key


@runtime_checkable
class Partitioner(Protocol):
    """What a producer needs from a partitioner; implement it to choose partitions yourself.

    ``available`` lists the partitions that currently have a leader.
    ``batch_closed`` is called (under the producer's lock) whenever the batch
    being filled for a partition is closed because it is full or is being
    sent; stateless partitioners ignore it.
    """

    def partition(self, topic: str, key: bytes | None, num_partitions: int, available: Sequence[int]) -> int: ...

    def batch_closed(self, topic: str, partition: int, num_partitions: int, available: Sequence[int]) -> None: ...


class DefaultPartitioner:
    """murmur2 for keys, sticky for null keys. Not thread-safe: the producer holds its lock."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng or random.Random()
        self._sticky: dict[str, int] = {}

    def partition(self, topic: str, key: bytes | None, num_partitions: int, available: Sequence[int]) -> int:
        if key is not None:
            return partition_for_key(key, num_partitions)
        current = self._sticky.get(topic)
        if current is None or current >= num_partitions:
            current = self._choose(num_partitions, available, previous=None)
            self._sticky[topic] = current
        return current

    def batch_closed(self, topic: str, partition: int, num_partitions: int, available: Sequence[int]) -> None:
        if self._sticky.get(topic) == partition:
            self._sticky[topic] = self._choose(num_partitions, available, previous=partition)

    def sticky_partition(self, topic: str) -> int | None:
        """The partition null-key records of ``topic`` currently go to, if one was chosen."""
        return self._sticky.get(topic)

    def _choose(self, num_partitions: int, available: Sequence[int], previous: int | None) -> int:
        pool = [p for p in available if p < num_partitions] or list(range(num_partitions))
        if previous is not None and len(pool) > 1:
            pool = [p for p in pool if p != previous]
        return self._rng.choice(pool)
