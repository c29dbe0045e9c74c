"""Which partitions a consumer reads, where it stands in each, and which need a reset.

Today partitions come from ``assign``. Group subscriptions (``subscribe``)
will feed the same state from the group coordinator's assignment, with
committed offsets as the starting positions; nothing else in the consumer
needs to change for that.

A partition's position is the offset of the next record to hand out. It is
unknown right after assignment (and after ``seek_to_beginning``/``_end``)
until a reset resolves it with ListOffsets.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Iterable

from broker_core.client.topic_partition import TopicPartition


class OffsetResetStrategy(Enum):
    EARLIEST = "earliest"
    LATEST = "latest"
    NONE = "none"

    @classmethod
    def parse(cls, value: str | OffsetResetStrategy) -> OffsetResetStrategy:
        if isinstance(value, cls):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            raise ValueError(f"auto_offset_reset must be 'earliest', 'latest' or 'none', not {value!r}") from None


@dataclass(slots=True)
class PartitionState:
    position: int | None = None
    reset: OffsetResetStrategy | None = None
    paused: bool = False
    # As of the last fetch response; -1 until one arrives.
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    # Not before this (monotonic seconds) after a failed fetch or reset.
    retry_at: float = 0.0


class SubscriptionState:
    def __init__(self, default_reset: OffsetResetStrategy) -> None:
        self.default_reset = default_reset
        self._partitions: dict[TopicPartition, PartitionState] = {}

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly ``partitions``; partitions kept from before keep their positions."""
        wanted = list(dict.fromkeys(partitions))
        self._partitions = {tp: self._partitions.get(tp) or PartitionState() for tp in wanted}

    def assignment(self) -> set[TopicPartition]:
        return set(self._partitions)

    def topics(self) -> set[str]:
        return {tp.topic for tp in self._partitions}

    def is_assigned(self, tp: TopicPartition) -> bool:
        return tp in self._partitions

    def state(self, tp: TopicPartition) -> PartitionState:
        state = self._partitions.get(tp)
        if state is None:
            raise ValueError(f"{tp} is not assigned to this consumer")
        return state

    def seek(self, tp: TopicPartition, offset: int) -> None:
        if offset < 0:
            raise ValueError(f"cannot seek {tp} to negative offset {offset}")
        state = self.state(tp)
        state.position = offset
        state.reset = None
        state.retry_at = 0.0

    def request_reset(self, tp: TopicPartition, strategy: OffsetResetStrategy | None = None) -> None:
        state = self.state(tp)
        state.position = None
        state.reset = strategy or self.default_reset
        state.retry_at = 0.0

    def position(self, tp: TopicPartition) -> int | None:
        return self.state(tp).position

    def pause(self, tp: TopicPartition) -> None:
        self.state(tp).paused = True

    def resume(self, tp: TopicPartition) -> None:
        self.state(tp).paused = False

    def paused(self) -> set[TopicPartition]:
        return {tp for tp, state in self._partitions.items() if state.paused}

    def missing_positions(self) -> list[TopicPartition]:
        """Partitions with neither a position nor a pending reset: they get the default one."""
        return [tp for tp, state in self._partitions.items() if state.position is None and state.reset is None]

    def awaiting_reset(self, now: float) -> dict[TopicPartition, OffsetResetStrategy]:
        return {
            tp: state.reset
            for tp, state in self._partitions.items()
            if state.reset is not None and state.retry_at <= now
        }

    def fetchable(self, now: float) -> list[TopicPartition]:
        """Assigned, not paused, positioned and not backing off."""
        return [
            tp
            for tp, state in self._partitions.items()
            if state.position is not None and not state.paused and state.retry_at <= now
        ]
