"""What the cleaner needs to know about transactions.

``AbortedTransactions`` answers whether a transactional batch belongs to an
aborted transaction (from the aborted-transaction index entries of the log).
``TxnMarkerTracker`` follows each producer's transaction through the
cleaned range in offset order, so that a COMMIT or ABORT marker is removed
only once no record of its transaction is left.
"""

from __future__ import annotations

import bisect
from typing import Iterable

from broker_core.storage.txn_index import AbortedTxn


class AbortedTransactions:
    """The aborted transactions of a log, by producer id."""

    def __init__(self, entries: Iterable[AbortedTxn]) -> None:
        self.entries = sorted(entries, key=lambda e: e.last_offset)
        ranges: dict[int, list[tuple[int, int]]] = {}
        for entry in self.entries:
            ranges.setdefault(entry.producer_id, []).append((entry.first_offset, entry.last_offset))
        self._ranges = {pid: sorted(spans) for pid, spans in ranges.items()}

    def contains(self, producer_id: int, offset: int) -> bool:
        """Whether ``offset`` of ``producer_id`` lies in one of its aborted transactions."""
        spans = self._ranges.get(producer_id)
        if not spans:
            return False
        i = bisect.bisect_right(spans, (offset, 1 << 63)) - 1
        return i >= 0 and spans[i][0] <= offset <= spans[i][1]

    def with_marker_in(self, start: int, end: int) -> list[AbortedTxn]:
        """The entries whose abort marker is in ``[start, end)``, in marker order."""
        return [entry for entry in self.entries if start <= entry.last_offset < end]


class TxnMarkerTracker:
    """Per producer: whether its current transaction still has records in the cleaned log."""

    def __init__(self) -> None:
        self._has_data: dict[int, bool] = {}

    def on_data(self, producer_id: int, kept_records: bool) -> None:
        if kept_records:
            self._has_data[producer_id] = True
        else:
            self._has_data.setdefault(producer_id, False)

    def on_marker(self, producer_id: int) -> bool:
        """The transaction ends here; return whether any of its records were kept."""
        return self._has_data.pop(producer_id, False)
