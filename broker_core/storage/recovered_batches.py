"""What crash recovery saw of the batches it re-validated, kept for the partition that opens the log.

After a crash the loader walks every batch from the segment holding the
recovery point to the log end (``LogSegment.recover``). Opening the partition
then needed two more walks over the same batches, on the event loop: one to
restore the leader epochs of batches above the recovery point
(``UnifiedLog._restore_unflushed_epochs``) and one to replay producer state
from its snapshot. The loader's walk, on a loading thread, keeps what those
need instead: the headers of batches that carry a producer id (with the
decoded marker of control batches) and the first batch of each run of one
leader epoch at or above the recovery point. The partition uses them when
they cover what it would read, and reads the log otherwise.

A log with more producer batches than :data:`MAX_KEPT` above its recovery
point keeps none (the partition reads the log): the headers are held in
memory until the partition opens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from broker_core.storage.producer_state.entry import EndTxnMarker
from spate.records.batch import BatchHeader
from spate.records.control import parse_control_record
from spate.records.errors import CorruptRecordError
from spate.records.reader import decode_batch

MAX_KEPT = 100_000

ProducerBatch = tuple[BatchHeader, EndTxnMarker | None]


@dataclass
class RecoveredBatches:
    """Batches from ``from_offset`` to the log end, as recovery validated them.

    ``producer_batches``: every batch with a producer id, in log order;
    ``epoch_starts``: ``(epoch, base offset)`` of each batch ending at or
    above ``recovery_point`` whose epoch differs from the previous such batch's.
    """

    from_offset: int
    recovery_point: int
    producer_batches: list[ProducerBatch] = field(default_factory=list)
    epoch_starts: list[tuple[int, int]] = field(default_factory=list)
    overflowed: bool = False

    def keep(self, header: BatchHeader, read: Callable[[], bytes]) -> None:
        """Take one validated batch (``read`` gives its bytes, fetched only for a control batch)."""
        if header.last_offset >= self.recovery_point:
            epoch = header.partition_leader_epoch
            if not self.epoch_starts or self.epoch_starts[-1][0] != epoch:
                self.epoch_starts.append((epoch, header.base_offset))
        if not header.has_producer_id or self.overflowed:
            return
        if len(self.producer_batches) >= MAX_KEPT:
            self.overflowed = True
            self.producer_batches.clear()
            return
        self.producer_batches.append((header, control_marker(read(), header) if header.is_control else None))

    @property
    def usable(self) -> bool:
        return not self.overflowed


def control_marker(batch: bytes | bytearray | memoryview, header: BatchHeader, position: int = 0) -> EndTxnMarker:
    """The decoded marker of the control batch at ``position`` of ``batch``."""
    decoded = decode_batch(batch, position)
    if len(decoded.records) != 1:
        raise CorruptRecordError(
            f"control batch at offset {header.base_offset} holds {len(decoded.records)} records, not 1"
        )
    control_type, coordinator_epoch = parse_control_record(decoded.records[0])
    return EndTxnMarker(control_type, coordinator_epoch)
