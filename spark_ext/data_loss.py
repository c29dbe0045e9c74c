"""Deciding when a read lost data, and what to do about it (``failOnDataLoss``).

Gaps inside the log are normal and never data loss: transaction markers,
records removed by compaction, aborted records skipped under read_committed.
Data is lost only when the partition's log start offset has moved past
offsets the query still needed, through retention or DeleteRecords. Then
the records ``[needed_from, log_start)`` are gone:

* ``failOnDataLoss=true``: the read fails with :class:`DataLossError`,
  naming the partition and the lost offsets;
* ``failOnDataLoss=false``: a warning is logged and the read continues from
  the log start.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from spate.client import TopicPartition

log = logging.getLogger("spark_ext.data_loss")


class DataLossError(Exception):
    """Offsets a query needed were deleted before it read them."""

    def __init__(self, topic_partition: TopicPartition, lost_from: int, lost_until: int, reason: str) -> None:
        self.topic_partition = topic_partition
        self.lost_from = lost_from
        self.lost_until = lost_until
        super().__init__(
            f"{describe_loss(topic_partition, lost_from, lost_until, reason)}. "
            "Set the option failOnDataLoss to false to skip lost data and continue from the log start."
        )


@dataclass(frozen=True, slots=True)
class DataLossPolicy:
    """``failOnDataLoss`` as an object the driver and the executors share."""

    fail_on_data_loss: bool = True

    def resolve_start(self, tp: TopicPartition, needed_from: int, log_start: int, *, reason: str = "") -> int:
        """Where to read ``tp`` from when the query needs ``needed_from`` and the log starts at ``log_start``.

        Raises DataLossError (``fail_on_data_loss``) or logs a warning when
        ``log_start`` is past ``needed_from``; returns ``max(needed_from, log_start)``.
        """
        if log_start <= needed_from:
            return needed_from
        reason = reason or "were deleted (retention or DeleteRecords) before the query read them"
        if self.fail_on_data_loss:
            raise DataLossError(tp, needed_from, log_start, reason)
        log.warning("%s; continuing from offset %d because failOnDataLoss is false",
                    describe_loss(tp, needed_from, log_start, reason), log_start)
        return log_start


def describe_loss(tp: TopicPartition, lost_from: int, lost_until: int, reason: str) -> str:
    count = lost_until - lost_from
    noun = "offset" if count == 1 else "offsets"
    return (
        f"Partition {tp.topic}-{tp.partition} lost data: {count} {noun} [{lost_from}, {lost_until}) {reason} "
        f"(the log now starts at offset {lost_until})"
    )
