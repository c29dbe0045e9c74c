"""The aborted-transaction indexes of one local log: kept up as markers are written, asked by fetches.

Each segment keeps the aborted-transaction index (``txn_index.py``) of the
abort markers it holds: the partition indexes an abort as it appends its
marker (``append_aborted_txn``), and read_committed fetches ask
``collect_aborted_transactions`` which aborts overlap the data they return
(an abort may come segments after its data: ``LogSegments`` walks them).
Before the partition replays the log into its producer state from an
offset, ``truncate_aborted_txns_from`` drops the entries the replay will
write again. An index the loader found corrupt was discarded; the log
remembers from where (``txn_index_lost_from``) until the partition has
rebuilt it (``forget_lost_txn_index``).

``AbortedTxnIndexes`` is mixed into ``LocalLog``: it uses the log's segments
and offsets and relies on ``LocalLog._check_open`` and ``_io_failed``.
"""

from __future__ import annotations

from typing import Callable

from broker_core.storage.errors import OffsetOutOfRangeError
from broker_core.storage.log_dir_failures import reports_io_errors
from broker_core.storage.segments import LogSegments
from broker_core.storage.txn_index import AbortedTxn


class AbortedTxnIndexes:
    """Upkeep and queries of the aborted-transaction indexes of one ``LocalLog``."""

    # The log's state, set by ``LocalLog.__init__``.
    _segments: LogSegments
    _log_start_offset: int
    _next_offset: int
    _txn_index_lost_from: int | None
    _check_open: Callable[[], None]

    @property
    def txn_index_lost_from(self) -> int | None:
        """Base offset of the first segment whose aborted-transaction index was
        discarded as corrupt when the log was loaded (None when none was)."""
        return self._txn_index_lost_from

    def forget_lost_txn_index(self) -> None:
        """Note that the entries of a discarded aborted-transaction index were rebuilt."""
        self._txn_index_lost_from = None

    @reports_io_errors
    def append_aborted_txn(self, txn: AbortedTxn) -> None:
        """Index an aborted transaction in the segment holding its marker (``txn.last_offset``).

        Entries must arrive in marker order; the index is flushed with its segment.
        """
        self._check_open()
        segment = self._segments.floor(txn.last_offset)
        if segment is None or txn.last_offset >= self._next_offset:
            raise OffsetOutOfRangeError(
                txn.last_offset, self._log_start_offset, self._next_offset, what="abort marker offset"
            )
        segment.append_aborted_txn(txn)

    def collect_aborted_transactions(self, start_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """Aborted transactions a fetch of ``start_offset`` up to ``upper_bound_offset`` overlaps.

        Those whose marker is at or above ``start_offset`` and whose first
        offset is below ``upper_bound_offset``, in marker order (see
        ``LogSegments.collect_aborted_transactions``).
        """
        self._check_open()
        return self._segments.collect_aborted_transactions(start_offset, upper_bound_offset)

    def truncate_aborted_txns_from(self, offset: int) -> int:
        """Drop the index entries of markers at or above ``offset``; return how many went.

        The partition calls this before replaying the log from ``offset`` into
        its producer state, which appends the entries again.
        """
        self._check_open()
        return sum(segment.txn_index.truncate_to(offset) for segment in self._segments.from_offset(offset))
