"""Writing transaction markers to the partitions of a finished transaction.

A commit or abort ends with one control batch in every partition the
transaction touched (PROTOCOL.md: control bit set, key ``version, type``,
value ``version, coordinatorEpoch``). Markers are idempotent to re-send: a
marker for a producer with no open transaction in a partition changes no
state, so after a restart the coordinator simply writes all of them again.

A :class:`MarkerWriter` reports back the partitions that could not take a
marker yet (led elsewhere, storage error) for a retry; a partition whose
topic was deleted needs no marker. The broker's writer, on the partitions it
leads, is ``broker_core.server.txn_marker_writer``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Protocol

from spate.structs import TopicPartition


@dataclass(frozen=True)
class MarkerRequest:
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    commit: bool


@dataclass
class MarkerOutcome:
    written: set[TopicPartition] = field(default_factory=set)
    retry: set[TopicPartition] = field(default_factory=set)


class MarkerWriter(Protocol):
    def write_markers(self, request: MarkerRequest, partitions: Iterable[TopicPartition]) -> MarkerOutcome:
        ...
