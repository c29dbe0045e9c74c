"""Which partitions a consumer reads, where it stands in each, and which need a reset.

Partitions come from ``assign`` (the application picks them) or, after
``subscribe``, from the group's assignment (``assign_from_subscribed``);
the two modes exclude each other, as in Kafka.

A partition's position is the offset of the next record to hand out. It is
unknown right after assignment (and after ``seek_to_beginning``/``_end``)
until a reset resolves it with ListOffsets. A consumer with a group id
first looks for the group's committed offset (``awaiting_committed``); only
a partition without one falls back to ``auto_offset_reset``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Iterable

from spate.structs import TopicPartition


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
    # The group's committed offset was looked up and there was none.
    committed_checked: bool = False


class SubscriptionType(Enum):
    NONE = "none"
    USER_ASSIGNED = "assign"
    TOPICS = "subscribe to topics"
    PATTERN = "subscribe to a pattern"


class SubscriptionState:
    def __init__(self, default_reset: OffsetResetStrategy, use_committed_offsets: bool = False) -> None:
        self.default_reset = default_reset
        self.use_committed_offsets = use_committed_offsets
        self._partitions: dict[TopicPartition, PartitionState] = {}
        self.type = SubscriptionType.NONE
        self.subscribed_topics: frozenset[str] = frozenset()
        self.pattern: re.Pattern[str] | None = None

    # --- subscription -------------------------------------------------------------------------

    def _set_type(self, wanted: SubscriptionType) -> None:
        if self.type not in (SubscriptionType.NONE, wanted) and {self.type, wanted} != {
            SubscriptionType.TOPICS, SubscriptionType.PATTERN
        }:
            raise ValueError(
                f"cannot {wanted.value} while the consumer is set to {self.type.value}: call unsubscribe() first"
            )
        self.type = wanted

    @property
    def is_subscribed(self) -> bool:
        """Partitions come from a group's assignment."""
        return self.type in (SubscriptionType.TOPICS, SubscriptionType.PATTERN)

    def subscribe(self, topics: Iterable[str]) -> bool:
        """Subscribe to these topics; True if the set changed."""
        self._set_type(SubscriptionType.TOPICS)
        self.pattern = None
        return self.set_subscribed_topics(topics)

    def subscribe_pattern(self, pattern: re.Pattern[str]) -> None:
        self._set_type(SubscriptionType.PATTERN)
        self.pattern = pattern

    def set_subscribed_topics(self, topics: Iterable[str]) -> bool:
        wanted = frozenset(topics)
        changed = wanted != self.subscribed_topics
        self.subscribed_topics = wanted
        return changed

    def matches_pattern(self, topic: str) -> bool:
        return self.pattern is not None and self.pattern.fullmatch(topic) is not None

    def unsubscribe(self) -> None:
        self.type = SubscriptionType.NONE
        self.subscribed_topics = frozenset()
        self.pattern = None
        self._partitions = {}

    # --- assignment ---------------------------------------------------------------------------

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly ``partitions``; partitions kept from before keep their positions.

        Assigning nothing is the same as ``unsubscribe``, as in Kafka.
        """
        wanted = list(partitions)
        if not wanted and not self.is_subscribed:
            self.unsubscribe()
            return
        self._set_type(SubscriptionType.USER_ASSIGNED)
        self._replace(wanted)

    def assign_from_subscribed(self, partitions: Iterable[TopicPartition]) -> None:
        """The group gave this member ``partitions``."""
        if not self.is_subscribed:
            raise ValueError("a group assignment arrived but the consumer is not subscribed")
        self._replace(partitions)

    def _replace(self, partitions: Iterable[TopicPartition]) -> None:
        wanted = list(dict.fromkeys(partitions))
        self._partitions = {tp: self._partitions.get(tp) or PartitionState() for tp in wanted}

    def assignment(self) -> set[TopicPartition]:
        return set(self._partitions)

    def topics(self) -> set[str]:
        """Topics whose metadata the consumer needs: assigned ones and subscribed ones."""
        return {tp.topic for tp in self._partitions} | set(self.subscribed_topics)

    def is_assigned(self, tp: TopicPartition) -> bool:
        return tp in self._partitions

    def state(self, tp: TopicPartition) -> PartitionState:
        state = self._partitions.get(tp)
        if state is None:
            raise ValueError(f"{tp} is not assigned to this consumer")
        return state

    def positions(self) -> dict[TopicPartition, int]:
        """The position of every assigned partition that has one."""
        return {tp: state.position for tp, state in self._partitions.items() if state.position is not None}

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
        """Partitions with neither a position nor a pending reset: they get the default one.

        With a group, only after the group turned out to have no committed offset for them.
        """
        return [
            tp
            for tp, state in self._partitions.items()
            if state.position is None
            and state.reset is None
            and (state.committed_checked or not self.use_committed_offsets)
        ]

    def awaiting_committed(self) -> list[TopicPartition]:
        """Partitions without a position whose group's committed offset has not been looked up."""
        if not self.use_committed_offsets:
            return []
        return [
            tp
            for tp, state in self._partitions.items()
            if state.position is None and state.reset is None and not state.committed_checked
        ]

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
