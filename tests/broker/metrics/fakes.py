"""Stand-ins for the broker parts collectors read: just the attributes they use."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any


@dataclass
class FakePartition:
    topic: str
    index: int
    is_leader: bool = True
    replicas: tuple[int, ...] = (1,)
    isr: tuple[int, ...] = (1,)
    min_insync_replicas: int = 1
    high_watermark: int = 0
    log_start_offset: int = 0
    log_end_offset: int = 0
    size: int = 0
    segments: int = 1
    producers: int = 0
    log: Any = field(init=False)

    def __post_init__(self) -> None:
        self.log = SimpleNamespace(
            local_log=SimpleNamespace(size_in_bytes=self.size, number_of_segments=self.segments),
            producer_state=SimpleNamespace(active_producers=lambda: dict.fromkeys(range(self.producers))),
        )


class FakeReplicas:
    def __init__(self, *partitions: FakePartition, offline: int = 0) -> None:
        self._partitions = {(p.topic, p.index): p for p in partitions}
        self.offline_count = offline

    def __iter__(self):
        return iter(list(self._partitions.values()))

    def hosted(self, topic: str, index: int) -> FakePartition | None:
        return self._partitions.get((topic, index))
