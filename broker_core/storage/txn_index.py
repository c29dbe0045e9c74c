"""The aborted-transaction index: one ``N.txnindex`` per segment.

A read_committed consumer must drop the records of aborted transactions. The
broker does not filter them; it tells the consumer which transactions in the
fetched range were aborted, and this index answers that question without
reading the log. Each entry describes one aborted transaction whose abort
marker sits in the segment, as 34 big-endian bytes::

    0   version           int16   0
    2   producerId        int64
    10  firstOffset       int64   first offset of the transaction in this partition
    18  lastOffset        int64   offset of the abort marker
    26  lastStableOffset  int64   the partition's LSO just after the abort

Entries are appended in increasing ``lastOffset`` (markers take offsets in
order), so a segment's file is sorted by it.

The file is created at the first abort; most segments never have one.
Entries are read into memory the first time a segment is searched or
written, and kept in step with the file afterwards.

Crash behaviour: an entry is written after its marker is in the log, so a
crash can lose entries from the tail, or leave a torn last entry. Loading
cuts the file back to whole entries (with a warning); the partition re-adds
entries of aborts found while replaying the log into its producer state. An
entry that does not parse (unknown version, offsets out of the segment)
raises ``CorruptTxnIndexError`` naming the file.
"""

from __future__ import annotations

import bisect
import logging
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from broker_core.storage.errors import CorruptIndexError, StorageError

logger = logging.getLogger(__name__)

TXN_INDEX_VERSION = 0
_ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = _ENTRY.size  # 34


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """One aborted transaction of a partition: its data spans ``first_offset..last_offset``
    (the abort marker), and ``last_stable_offset`` was the LSO once it ended."""

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    def encode(self) -> bytes:
        return _ENTRY.pack(
            TXN_INDEX_VERSION, self.producer_id, self.first_offset, self.last_offset, self.last_stable_offset
        )


@dataclass(frozen=True, slots=True)
class TxnIndexSearchResult:
    """Aborted transactions overlapping a fetch, and whether later segments can hold more.

    ``is_complete`` is set once an entry's LSO reached the fetch's upper
    bound: every transaction that began below the bound had ended by then, so
    no later abort can overlap the fetch.
    """

    aborted: list[AbortedTxn]
    is_complete: bool


class CorruptTxnIndexError(CorruptIndexError):
    """A ``.txnindex`` holds an entry that cannot be an aborted transaction of its segment."""


class TxnIndexOrderError(StorageError):
    """An entry appended out of ``lastOffset`` order; the index would stop being sorted."""


class TransactionIndex:
    """The aborted transactions whose markers lie in one segment."""

    def __init__(self, path: Path, base_offset: int, *, exists: bool | None = None) -> None:
        """The index at ``path``, read on first use; ``exists`` False (a directory listing lacks the file)
        means no entries without looking."""
        self._path = path
        self.base_offset = base_offset
        self._entries: list[AbortedTxn] | None = None if exists is not False else []
        self._last_offsets: list[int] = []
        self._file: BinaryIO | None = None

    @property
    def path(self) -> Path:
        return self._path

    def entries(self) -> list[AbortedTxn]:
        """Every entry, in file order."""
        return list(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())

    # ------------------------------------------------------------- writing

    def append(self, txn: AbortedTxn) -> None:
        """Add an entry after every existing one; it must end after the last entry ends."""
        entries = self._loaded()
        if txn.first_offset > txn.last_offset:
            raise ValueError(f"aborted transaction {txn} starts after its marker")
        if txn.last_offset < self.base_offset:
            raise ValueError(f"aborted transaction {txn} ends below segment base offset {self.base_offset}")
        if entries and txn.last_offset <= entries[-1].last_offset:
            raise TxnIndexOrderError(
                f"{self._path}: entry ending at {txn.last_offset} appended after one ending at "
                f"{entries[-1].last_offset}"
            )
        if self._file is None:
            self._file = open(self._path, "ab", buffering=0)
        data = txn.encode()
        written = 0
        while written < len(data):
            written += self._file.write(data[written:])
        entries.append(txn)
        self._last_offsets.append(txn.last_offset)

    def truncate_to(self, offset: int) -> int:
        """Drop every entry whose marker is at or above ``offset``; return how many went."""
        entries = self._loaded()
        keep = bisect.bisect_left(self._last_offsets, offset)
        dropped = len(entries) - keep
        if dropped:
            del entries[keep:]
            del self._last_offsets[keep:]
            os.truncate(self._path, keep * ENTRY_SIZE)
        return dropped

    def reset(self) -> None:
        """Forget every entry and remove the file."""
        self.close()
        self._path.unlink(missing_ok=True)
        self._entries = []
        self._last_offsets = []

    # ------------------------------------------------------------- reading

    def collect_aborted(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        """Transactions whose marker is at or above ``fetch_offset`` and that began
        below ``upper_bound_offset`` (the offset after the fetched data)."""
        entries = self._loaded()
        found: list[AbortedTxn] = []
        # Sorted by lastOffset: entries ending below the fetch cannot overlap it,
        # and their LSO (at most their lastOffset + 1) cannot reach the bound.
        for txn in entries[bisect.bisect_left(self._last_offsets, fetch_offset) :]:
            if txn.first_offset < upper_bound_offset:
                found.append(txn)
            if txn.last_stable_offset >= upper_bound_offset:
                return TxnIndexSearchResult(found, True)
        return TxnIndexSearchResult(found, False)

    def sanity_check(self) -> int:
        """Read and check the whole file; return the torn bytes cut from its end.

        Raises ``CorruptTxnIndexError`` for an entry of an unknown version or
        one whose marker lies below the segment.
        """
        self._entries = None
        before = self._path.stat().st_size if self._path.exists() else 0
        self._loaded()
        return before - len(self._entries or ()) * ENTRY_SIZE

    def _loaded(self) -> list[AbortedTxn]:
        if self._entries is None:
            entries = self._read_file()
            self._entries = entries
            self._last_offsets = [txn.last_offset for txn in entries]
        return self._entries

    def _read_file(self) -> list[AbortedTxn]:
        try:
            data = self._path.read_bytes()
        except FileNotFoundError:
            return []
        torn = len(data) % ENTRY_SIZE
        if torn:
            logger.warning(
                "%s ends with a torn entry (%d bytes); truncating it to %d whole entries",
                self._path, torn, len(data) // ENTRY_SIZE,
            )
            os.truncate(self._path, len(data) - torn)
        entries = []
        previous_last = -1
        for position in range(0, len(data) - torn, ENTRY_SIZE):
            version, producer_id, first, last, lso = _ENTRY.unpack_from(data, position)
            if version != TXN_INDEX_VERSION:
                raise CorruptTxnIndexError(self._path, f"entry at byte {position} has unknown version {version}")
            if last < self.base_offset or first > last or last <= previous_last:
                raise CorruptTxnIndexError(
                    self._path,
                    f"entry at byte {position} spans {first}..{last}, which does not fit segment "
                    f"{self.base_offset} after an entry ending at {previous_last}",
                )
            previous_last = last
            entries.append(AbortedTxn(producer_id, first, last, lso))
        return entries

    # ----------------------------------------------------------- lifecycle

    def flush(self) -> None:
        if self._file is not None:
            os.fsync(self._file.fileno())

    def rename(self, new_path: Path) -> None:
        """Move the file (when there is one); an open handle stays valid."""
        if self._path.exists():
            os.replace(self._path, new_path)
        self._path = new_path

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def delete(self) -> None:
        self.close()
        self._path.unlink(missing_ok=True)

    def __repr__(self) -> str:
        count = "?" if self._entries is None else len(self._entries)
        return f"TransactionIndex({self._path.name}, entries={count})"
