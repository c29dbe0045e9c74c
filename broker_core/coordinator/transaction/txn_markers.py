"""Writing transaction markers to the partitions of a finished transaction.

A commit or abort ends with one control batch in every partition the
transaction touched (PROTOCOL.md: control bit set, key ``version, type``,
value ``version, coordinatorEpoch``). Markers are idempotent to re-send: a
marker for a producer with no open transaction in a partition changes no
state, so after a restart the coordinator simply writes all of them again.

A :class:`MarkerWriter` takes one transaction's markers and reports, once,
through the callback it is given: the partitions that took the marker, and
those that could not yet (no leader, leader moved, unreachable, storage
error) for the coordinator to retry after a back-off. A partition in
neither set needs no marker (its topic was deleted, or a newer producer or
coordinator epoch already wrote there). The report may come at once (the
partitions led here) or on a later turn of the event loop (partitions led
by other brokers, reached with WriteTxnMarkers); it always comes on the
loop's thread. The broker's writer is ``broker_core.server.txn_marker_writer``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Protocol

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


MarkersDone = Callable[[MarkerOutcome], None]


class MarkerWriter(Protocol):
    def write_markers(self, request: MarkerRequest, partitions: Iterable[TopicPartition], done: MarkersDone) -> None:
        """Write the marker to each partition; ``done`` gets the outcome exactly once."""
        ...
