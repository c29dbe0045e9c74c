"""Opening a partition directory: file discovery and crash recovery.

Loading runs before the log serves anything, in this order:

1. Leftovers are settled. A compaction swap a crash interrupted is completed
   or rolled back first (``cleaner/swap.py``, which records the range it
   replaces). ``.deleted`` and ``.cleaned`` files are removed
   (their segments were already out of the log, or never in it). A ``.swap``
   segment is a compaction result that was fully written before being renamed
   to ``.swap``, so the swap is completed: the segments it replaces (base
   offsets from the swap's base up to its next offset) are removed and the
   swap file takes its live name; its indexes are rebuilt. Index files without
   a ``.log`` are removed.
2. Every ``.log`` is opened as a segment. The directory is listed once for
   all of this (and for step 5): which files exist is read from that listing.
3. After a clean shutdown nothing is read (Kafka's lazy segments): each
   segment opens its indexes, checks them against the log and reads its end
   and largest timestamp on first use, and the log end offset is the
   recovery point the shutdown checkpointed after its final flush. Only a
   segment whose index files are missing has them rebuilt now, and the last
   segment is read when the checkpoint names no usable end for it.
4. Otherwise segments that may hold unflushed data are recovered: the
   segment holding the recovery point and every later one. Recovery
   re-validates batch by batch (CRC for batches at or above the recovery
   point), requires offsets to strictly increase across batches and
   segments, truncates at the first batch failing that, deletes every later
   segment, and rebuilds the indexes. Earlier segments are trusted: their
   indexes are checked against the log and rebuilt (without CRC work) when
   they do not fit.
5. The small files the partition's producer state and leader-epoch cache
   start from are read (``partition_files``), so that opening the partition
   later reads none.

Aborted-transaction indexes are checked for every segment before that: a
torn last entry is cut off; a file with an entry that does not parse is
discarded and ``txn_index_lost_from`` tells the partition to rebuild the
entries from the log. Recovery drops entries past a segment's new end.

The result is the longest valid prefix of what was written. Nothing is
fsynced while loading (as in Kafka): the recovered data keeps counting as
unflushed, so the recovery point stays where it was (capped at the log end
offset) and the log's flusher fsyncs that data, and the directory when
recovery removed or cut files, on its next flush. Another crash before then
re-validates the same segments. After a clean shutdown everything was
flushed and the recovery point is the log end offset.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from broker_core.storage.batch_reader import BatchReader
from broker_core.storage.cleaner.segment_cleaner import SCRATCH_DIR
from broker_core.storage.cleaner.swap import SWAP_RANGE_FILE, recover_swap
from broker_core.storage.config import LogConfig
from broker_core.storage.errors import CorruptIndexError, LogDirError
from broker_core.storage.file_records import NO_CRC_CHECK
from broker_core.storage.files import FileKind, FileState, SegmentFileName, parse_segment_file_name, segment_paths
from broker_core.storage.open_files import OpenFileCache
from broker_core.storage.partition_files import PartitionFiles, read_partition_files
from broker_core.storage.recovered_batches import RecoveredBatches
from broker_core.storage.segment import LogSegment
from broker_core.storage.segments import LogSegments
from broker_core.storage.txn_index import CorruptTxnIndexError
from spate.records.errors import CorruptRecordError

_log = logging.getLogger(__name__)



@dataclass
class LoadedLog:
    """What the loader hands to the live log."""

    segments: LogSegments
    open_files: OpenFileCache
    log_start_offset: int
    recovery_point: int
    next_offset: int
    truncated_bytes: int = 0
    recovered_segments: int = 0
    # Base offsets of the segments re-validated.
    recovered: set[int] = field(default_factory=set)
    # What that re-validation kept for the partition (``recovered_batches``; None after a clean shutdown).
    recovered_batches: RecoveredBatches | None = None
    txn_index_lost_from: int | None = None
    # Files were removed or cut: the directory is fsynced with the next flush.
    directory_changed: bool = False
    # What the partition's producer state and epoch cache start from, read here (``partition_files``).
    partition_files: PartitionFiles | None = None


def load_log(
    directory: Path,
    config: LogConfig,
    *,
    clock: Callable[[], int],
    recovery_point: int | None = 0,
    log_start_offset: int | None = None,
    had_clean_shutdown: bool = False,
    open_files: OpenFileCache | None = None,
) -> LoadedLog:
    """Open every segment of ``directory`` (created when missing), recovering as needed.

    The segments take descriptors from ``open_files`` as they need them.

    Raises ``LogDirError`` when the directory or a file in it cannot be used.
    """
    names = _list_or_create(directory)
    try:
        # A log opened without the broker's cache (tools, tests) gets one of its own: unbounded, freed with it.
        open_files = open_files if open_files is not None else OpenFileCache()
        return _load(directory, names, config, clock, recovery_point, log_start_offset, had_clean_shutdown, open_files)
    except OSError as exc:
        raise LogDirError(directory, f"cannot load the log: {exc}") from exc


def _load(
    directory: Path,
    names: list[str],
    config: LogConfig,
    clock: Callable[[], int],
    recovery_point: int | None,
    log_start_offset: int | None,
    had_clean_shutdown: bool,
    open_files: OpenFileCache,
) -> LoadedLog:
    now_ms = clock()
    compaction_swap_settled = False
    if SWAP_RANGE_FILE in names or SCRATCH_DIR in names:
        compaction_swap_settled = recover_swap(directory)
        names = os.listdir(directory)
    parsed_names = _segment_files(names)
    if _settle_leftovers(directory, parsed_names):
        names = os.listdir(directory)
        parsed_names = _segment_files(names)
    present = _live_segment_files(parsed_names)
    segments = LogSegments()
    for base_offset in sorted(b for b, kinds in present.items() if FileKind.LOG in kinds):
        segments.add(_open_segment(
            directory, base_offset, config, now_ms, open_files, present=present[base_offset], lazy=had_clean_shutdown,
        ))

    loaded = LoadedLog(segments, open_files, 0, 0, 0)
    for segment in segments:
        if FileKind.TXN_INDEX in present[segment.base_offset]:
            _check_txn_index(segment, loaded)
    if len(segments) == 0:
        start = log_start_offset if log_start_offset is not None else 0
        segments.add(_open_segment(directory, start, config, now_ms, open_files))
    elif had_clean_shutdown:
        _open_cleanly_closed(segments, recovery_point)
    else:
        _recover_segments(segments, loaded, recovery_point or 0)

    first, last = _ends(segments)
    next_offset = last.next_offset
    start = first.base_offset if log_start_offset is None else max(log_start_offset, first.base_offset)
    if start > next_offset:
        # Nothing below the log start offset is visible; begin afresh there.
        loaded.recovered_batches = None
        for segment in segments:
            segments.remove(segment.base_offset)
            segment.delete_files()
        segments.add(_open_segment(directory, start, config, now_ms, open_files))
        next_offset = start
        first, last = _ends(segments)

    for segment in segments:
        # A lazy segment's indexes are as its last close left them (trimmed, with the final time entry).
        if segment is not last and segment.indexes_opened:
            segment.on_become_inactive()
            segment.release_indexes()
    last.activate()
    if not had_clean_shutdown and last.base_offset not in loaded.recovered:
        last.refresh_max_timestamp()  # recovery computed it exactly; loading took the time index's word
    loaded.directory_changed = loaded.recovered_segments > 0 or compaction_swap_settled

    loaded.log_start_offset = start
    loaded.next_offset = next_offset
    loaded.recovery_point = (
        next_offset if had_clean_shutdown else max(start, min(recovery_point or 0, next_offset))
    )
    kept = loaded.recovered_batches
    loaded.partition_files = read_partition_files(
        directory, frozenset(names), start, next_offset, kept if kept is not None and kept.usable else None
    )
    if loaded.recovered_segments:
        _log.info("%s: re-validated %d of %d segment(s), from the one holding recovery point %d",
                  directory.name, loaded.recovered_segments, len(segments), recovery_point or 0)
    return loaded


def _open_cleanly_closed(segments: LogSegments, recovery_point: int | None) -> None:
    """Trust a cleanly shut down log without reading it (its segments are lazy).

    The shutdown flushed every log before writing the recovery-point
    checkpoint and then the marker, so the checkpoint holds each log's end
    offset: the last segment's next offset. Only a segment whose index files
    are missing is read (its indexes are rebuilt), and the last one when the
    checkpoint does not name its log or names an offset it cannot end at.
    """
    last = segments.last
    for segment in segments:
        if segment.needs_index_rebuild:
            _load_trusted(segment, None)
    if last is None or last.indexes_opened:
        return
    if last.is_empty:
        last.trust_next_offset(last.base_offset)
    elif recovery_point is not None and last.can_hold_offset(recovery_point - 1) and recovery_point > last.base_offset:
        last.trust_next_offset(recovery_point)
    else:
        _log.warning("%s: no usable recovery point for the log end (%s); reading the last segment",
                     last.log_path.parent.name, recovery_point)
        _load_trusted(last, None)


def _recover_segments(segments: LogSegments, loaded: LoadedLog, recovery_point: int) -> None:
    """After a crash: trust what is below the recovery point, re-validate the rest (module docstring)."""
    floor = segments.floor(recovery_point) or segments.first
    recover_from = floor.base_offset if floor is not None else None
    if recover_from is not None:
        loaded.recovered_batches = RecoveredBatches(recover_from, recovery_point)
    previous_next: int | None = None
    ordered = list(segments)
    for i, segment in enumerate(ordered):
        overlaps = previous_next is not None and segment.base_offset < previous_next
        if recover_from is not None and segment.base_offset >= recover_from or overlaps:
            # Only segments from recover_from on are walked end to end, without gaps.
            kept = loaded.recovered_batches if recover_from is not None and segment.base_offset >= recover_from else None
            truncated = segment.recover(
                crc_from_offset=recovery_point, min_base_offset=previous_next, on_batch=kept.keep if kept else None
            )
            loaded.recovered_segments += 1
            loaded.recovered.add(segment.base_offset)
            if truncated:
                _log.warning(
                    "truncated %d bytes of torn or corrupt data from %s at offset %d",
                    truncated, segment.log_path, segment.next_offset,
                )
                loaded.truncated_bytes += truncated
                for later in ordered[i + 1 :]:
                    _log.warning("deleting %s, written after the corrupt tail", later.log_path)
                    segments.remove(later.base_offset)
                    later.delete_files()
                if segment.is_empty and segment is not ordered[0]:
                    segments.remove(segment.base_offset)
                    segment.delete_files()
                return
        else:
            _load_trusted(segment, previous_next)
        previous_next = segment.next_offset


def _check_txn_index(segment: LogSegment, loaded: LoadedLog) -> None:
    try:
        segment.txn_index.sanity_check()
    except CorruptTxnIndexError as exc:
        _log.error("discarding %s; its entries will be rebuilt from the log: %s", exc.path, exc.reason)
        segment.txn_index.reset()
        if loaded.txn_index_lost_from is None:
            loaded.txn_index_lost_from = segment.base_offset


def _ends(segments: LogSegments) -> tuple[LogSegment, LogSegment]:
    first, last = segments.first, segments.last
    if first is None or last is None:
        raise RuntimeError("a loaded log has at least one segment")
    return first, last


def _load_trusted(segment: LogSegment, previous_next: int | None) -> None:
    try:
        segment.load()
        return
    except CorruptIndexError as exc:
        _log.warning("rebuilding the indexes of %s: %s", segment.log_path, exc)
    except CorruptRecordError as exc:
        _log.warning("re-validating %s: %s", segment.log_path, exc)
    truncated = segment.recover(crc_from_offset=NO_CRC_CHECK, min_base_offset=previous_next)
    if truncated:
        _log.error("flushed segment %s lost %d bytes to corruption", segment.log_path, truncated)


def _open_segment(
    directory: Path, base_offset: int, config: LogConfig, now_ms: int, open_files: OpenFileCache, *,
    present: frozenset[FileKind] | None = None, lazy: bool = False,
) -> LogSegment:
    return LogSegment(
        directory,
        base_offset,
        index_interval_bytes=config.index_interval_bytes,
        max_index_size=config.segment_index_bytes,
        created_ms=now_ms,
        open_files=open_files,
        present=present,
        lazy=lazy,
        preallocate_bytes=config.preallocate_bytes,
    )


def _list_or_create(directory: Path) -> list[str]:
    """The names in ``directory``, created (empty) when missing; ``LogDirError`` when it cannot serve."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        names = []
        try:
            directory.mkdir(parents=False)
        except FileExistsError:
            raise LogDirError(directory, "exists and is not a directory") from None
        except OSError as exc:
            raise LogDirError(directory, f"cannot be created: {exc.strerror}") from exc
    except NotADirectoryError:
        raise LogDirError(directory, "exists and is not a directory") from None
    except OSError as exc:
        raise LogDirError(directory, f"cannot be listed: {exc.strerror}") from exc
    if not os.access(directory, os.W_OK | os.X_OK):
        raise LogDirError(directory, "is not writable")
    return names


def _settle_leftovers(directory: Path, parsed_names: list[tuple[str, SegmentFileName]]) -> bool:
    """Finish what a crash left among the segment files; return whether any file changed."""
    changed = False
    if any(p.state is not FileState.LIVE for _, p in parsed_names):
        for name, parsed in parsed_names:
            if parsed.state in (FileState.DELETED, FileState.CLEANED):
                (directory / name).unlink(missing_ok=True)
        for _, parsed in parsed_names:
            if parsed.state is FileState.SWAP and parsed.kind is FileKind.LOG:
                _complete_swap(directory, parsed.base_offset)
        parsed_names = _segment_files(os.listdir(directory))
        changed = True
    live_logs = {p.base_offset for _, p in parsed_names if p.state is FileState.LIVE and p.kind is FileKind.LOG}
    for name, parsed in parsed_names:
        if parsed.state is FileState.SWAP:
            # Index files of a swap: rebuilt from the log once it is live.
            (directory / name).unlink(missing_ok=True)
            changed = True
        elif parsed.state is FileState.LIVE and parsed.kind is not FileKind.LOG and parsed.base_offset not in live_logs:
            (directory / name).unlink(missing_ok=True)
            changed = True
    return changed


def _segment_files(names: list[str]) -> list[tuple[str, SegmentFileName]]:
    """``(name, parsed name)`` of every segment file among ``names`` (one directory listing), by name."""
    found = []
    for name in sorted(names):
        parsed = parse_segment_file_name(name)
        if parsed is not None:
            found.append((name, parsed))
    return found


def _live_segment_files(parsed_names: list[tuple[str, SegmentFileName]]) -> dict[int, frozenset[FileKind]]:
    """The live files of each segment, by base offset."""
    kinds: dict[int, set[FileKind]] = {}
    for _, parsed in parsed_names:
        if parsed.state is FileState.LIVE:
            kinds.setdefault(parsed.base_offset, set()).add(parsed.kind)
    return {base: frozenset(found) for base, found in kinds.items()}


def _complete_swap(directory: Path, base_offset: int) -> None:
    swap = segment_paths(directory, base_offset, FileState.SWAP)
    try:
        swap_next = _next_offset_of_file(swap.log, base_offset)
    except CorruptRecordError as exc:
        _log.warning("discarding unreadable compaction result %s: %s", swap.log, exc)
        swap.log.unlink(missing_ok=True)
        return
    replaced_until = max(swap_next, base_offset + 1)
    for other in _live_log_bases(directory):
        if base_offset <= other < replaced_until:
            for path in segment_paths(directory, other).all():
                path.unlink(missing_ok=True)
    live = segment_paths(directory, base_offset)
    for path in (live.index, live.time_index, live.txn_index):
        path.unlink(missing_ok=True)
    os.replace(swap.log, live.log)


def _next_offset_of_file(path: Path, base_offset: int) -> int:
    with open(path, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        reader = BatchReader(f.fileno(), size, window=1 << 20)
        position = 0
        next_offset = base_offset
        while position < size:
            header = reader.next_header(position)
            next_offset = header.next_offset
            position += header.size
        return next_offset


def _live_log_bases(directory: Path) -> list[int]:
    bases = []
    for name in os.listdir(directory):
        parsed = parse_segment_file_name(name)
        if parsed is not None and parsed.kind is FileKind.LOG and parsed.state is FileState.LIVE:
            bases.append(parsed.base_offset)
    return sorted(bases)
