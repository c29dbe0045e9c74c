"""What the producer knows of the topics it sends to, and waiting until it knows enough.

``send`` looks a topic's partition count and available partitions up once
per metadata snapshot, not once per record: :attr:`ProducerMetadata.topics`
caches them with the snapshot they were read from. A topic (or partition)
the metadata does not know yet is added to the topics the sender refreshes,
and ``send`` waits for it up to ``max_block_ms``.
"""

from __future__ import annotations

from typing import Callable

from spate.client.errors import KafkaTimeoutError
from spate.client.net.metadata import ClusterSnapshot, Metadata
from spate.protocol import ErrorCode, KafkaError

# Topic-level metadata errors that waiting will not cure.
_FATAL_TOPIC_ERRORS = frozenset({ErrorCode.INVALID_TOPIC_EXCEPTION, ErrorCode.TOPIC_AUTHORIZATION_FAILED})
# How long one wait for a metadata refresh lasts at most, so that the checks run again.
_WAIT_STEP = 0.5


class ProducerMetadata:
    """The producer's view of its topics; ``check_usable`` raises if the producer closed or failed meanwhile."""

    def __init__(
        self,
        metadata: Metadata,
        *,
        wakeup: Callable[[], None],
        check_usable: Callable[[], None],
        max_block: float,
        clock: Callable[[], float],
    ) -> None:
        self.metadata = metadata
        self._wakeup = wakeup
        self._check_usable = check_usable
        self._max_block = max_block
        self._clock = clock
        # topic -> (metadata snapshot, partition count, partitions with a leader), read from that snapshot.
        self.topics: dict[str, tuple[ClusterSnapshot, int, tuple[int, ...]]] = {}

    def lookup(self, topic: str) -> tuple[int | None, tuple[int, ...]]:
        """The topic's partition count (None: unknown) and available partitions, from the current snapshot."""
        snapshot = self.metadata.snapshot
        known = self.topics.get(topic)
        if known is not None and known[0] is snapshot:
            return known[1], known[2]
        count = snapshot.partition_count(topic)
        available = snapshot.available_partitions(topic)
        if count is not None:
            self.topics[topic] = (snapshot, count, available)
        return count, available

    def wait_for_partitions(self, topic: str, partition: int | None, deadline: float) -> tuple[ClusterSnapshot, int]:
        """Block until metadata knows ``topic`` (and ``partition``) or the deadline passes."""
        metadata = self.metadata
        metadata.add_topics([topic])
        while True:
            snapshot = metadata.snapshot
            count = snapshot.partition_count(topic)
            if count is not None and (partition is None or partition < count):
                return snapshot, count
            error = snapshot.topic_errors.get(topic)
            if error in _FATAL_TOPIC_ERRORS:
                raise KafkaError(error, f"cannot produce to topic {topic!r}")
            self._check_usable()
            remaining = deadline - self._clock()
            if remaining <= 0:
                raise self._timed_out(topic, partition, count, error)
            seen = metadata.version
            metadata.request_update()
            self._wakeup()
            metadata.wait_for_change(seen, min(remaining, _WAIT_STEP))

    def _timed_out(
        self, topic: str, partition: int | None, count: int | None, error: ErrorCode | None
    ) -> KafkaTimeoutError:
        wanted = f"partition {partition} of topic {topic!r}" if partition is not None else f"topic {topic!r}"
        why = f" (the broker answers {error.name})" if error is not None else ""
        if count is not None:
            why = f" (the topic has {count} partitions)"
        return KafkaTimeoutError(f"{wanted} not present in metadata after {self._max_block * 1000:.0f} ms{why}")
