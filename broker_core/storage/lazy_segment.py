"""Lazy segments: a segment of a log opened after a clean shutdown (Kafka's
``LazyIndex``) reads nothing when it is opened.

Its indexes, its next offset, largest timestamp and first batch's timestamp
are read on first use, when the indexes are also checked against the log
(``LogSegment.load``) and rebuilt if they do not fit. A lazy segment nobody
used is closed without touching its files.

:class:`LazySegmentState` is the part of :class:`LogSegment` that knows which
attributes are filled in late and how; the segment itself decides whether it
starts lazy.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TypeVar

from broker_core.storage.errors import CorruptIndexError
from broker_core.storage.file_records import NO_CRC_CHECK
from broker_core.storage.files import SegmentPaths
from broker_core.storage.offset_index import OffsetIndex
from broker_core.storage.open_files import OpenFileCache
from broker_core.storage.time_index import TimeIndex
from broker_core.storage.txn_index import TransactionIndex
from spate.records.errors import CorruptRecordError

# What a lazy segment fills in on first use (the transaction index aside: see ``__getattr__``).
LAZY_STATE = frozenset(
    {"offset_index", "time_index", "_next_offset", "_max_timestamp", "_offset_of_max_timestamp", "_roll_base_ms"}
)

_Index = TypeVar("_Index", OffsetIndex, TimeIndex)

_logger = logging.getLogger(__name__)


class LazySegmentState:
    """Opens a segment's indexes, at once or (lazy) on first use.

    Mixed into ``LogSegment``, which provides the attributes declared here and
    ``load``, ``recover`` and ``on_become_inactive``.
    """

    base_offset: int
    needs_index_rebuild: bool
    _paths: SegmentPaths
    _active: bool
    _max_index_size: int
    _open_files: OpenFileCache

    def __getattr__(self, name: str) -> object:
        """Load a lazy segment's state on first use (only called for attributes not set yet)."""
        if name == "txn_index":
            # Read on first use too: only its path is made here.
            self.txn_index = TransactionIndex(self._paths.txn_index, self.base_offset)
            return self.txn_index
        if name not in LAZY_STATE:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self._open_lazily()
        return self.__dict__[name]

    @property
    def indexes_opened(self) -> bool:
        """Whether the index objects exist (a lazy segment's are made on first use)."""
        return "offset_index" in self.__dict__

    def _open_indexes(self) -> None:
        self.offset_index = self._open_index(OffsetIndex, self._paths.index, self._max_index_size)
        self.time_index = self._open_index(TimeIndex, self._paths.time_index, self._max_index_size)
        if self._active:
            self.offset_index.activate()
            self.time_index.activate()

    def _open_index(self, cls: type[_Index], path: Path, max_index_size: int) -> _Index:
        try:
            return cls(path, self.base_offset, max_index_size, self._open_files)
        except CorruptIndexError:
            self.needs_index_rebuild = True
            path.unlink()
            return cls(path, self.base_offset, max_index_size, self._open_files)

    def _open_lazily(self) -> None:
        """Open a lazy segment's indexes and check them against the log, as ``load`` does at start-up for
        a log that was not shut down cleanly; rebuild them from the log when they do not fit."""
        self._open_indexes()
        try:
            self.load()  # type: ignore[attr-defined]
        except (CorruptIndexError, CorruptRecordError) as exc:
            _logger.warning("rebuilding the indexes of %s on first use: %s", self._paths.log, exc)
            self._rebuild_indexes()

    def _rebuild_indexes(self) -> None:
        """Recover a segment of a cleanly shut down log whose indexes turned out unusable (no CRC work)."""
        self.needs_index_rebuild = False
        active = self._active
        self.recover(crc_from_offset=NO_CRC_CHECK)  # type: ignore[attr-defined]
        if not active:
            self.on_become_inactive()  # type: ignore[attr-defined]
