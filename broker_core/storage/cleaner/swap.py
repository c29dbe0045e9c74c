"""Putting a cleaned segment in place of the segments it replaces, crash-safely.

Kafka's protocol, with one addition: the range replaced is written down
before the swap commits, because a cleaned segment whose last records were
removed does not say where the replaced segments ended.

1. ``cleaner-swap`` is written (atomically): ``<base> <end> <kinds>``, the
   cleaned segment's base offset, the base offset of the segment after the
   group, and which files the cleaned segment has (an empty one has no
   indexes), so that recovery can tell a replaced segment's file from the
   cleaned one's.
2. The ``.cleaned`` files are renamed ``.swap``, the ``.log`` last; the
   directory is fsynced. The rename of ``<base>.log.cleaned`` is the commit.
3. The replaced segments leave the log: renamed ``.deleted``, their files
   removed after ``file.delete.delay.ms`` (readers holding them finish).
4. The ``.swap`` files take their live names, the ``.log`` last; the
   directory is fsynced and the new segment joins the log.
5. ``cleaner-swap`` is removed.

Recovery at load (``recover_swap``), before anything else looks at the
directory: with ``cleaner-swap`` present and ``<base>.log.swap`` present the
swap had committed, so it is completed (live segments of the range are
removed, ``.swap`` files renamed live); otherwise it had not committed (or
had completed), and ``.cleaned`` / ``.swap`` leftovers of ``<base>`` are
removed. Either way the log holds the old segments or the new one, never a
mix. The scratch directory a cleaning builds in is removed.

``SPATE_TEST_SWAP_KILL_AT`` (tests only) names a step at which the process
kills itself with SIGKILL, to land a crash inside a swap.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
from pathlib import Path
from typing import Callable, Sequence

from broker_core.storage.cleaner.plan import StalePlanError
from broker_core.storage.cleaner.segment_cleaner import SCRATCH_DIR, CleanedSegment
from broker_core.storage.files import (
    FileKind,
    FileState,
    parse_partition_dir_name,
    parse_segment_file_name,
    segment_paths,
)
from broker_core.storage.fs import fsync_directory, write_atomically
from broker_core.storage.segment import LogSegment

_log = logging.getLogger(__name__)

SWAP_RANGE_FILE = "cleaner-swap"
KILL_AT_ENV = "SPATE_TEST_SWAP_KILL_AT"
SWAP_STEPS = ("cleaned", "range-written", "swap-index-renamed", "swap-committed", "old-retired", "live-index-renamed", "live")


def _step(name: str) -> None:
    if os.environ.get(KILL_AT_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def commit_swap(
    cleaned: CleanedSegment,
    old_segments: Sequence[LogSegment],
    *,
    retire: Callable[[Sequence[LogSegment]], None],
    open_segment: Callable[[int], LogSegment],
) -> LogSegment:
    """Steps 1-5 of the module docstring; return the new segment, opened (not yet in the log).

    ``retire`` takes the old segments out of the log and renames them
    ``.deleted``; ``open_segment`` opens the live segment at a base offset.
    """
    directory = cleaned.directory
    base = cleaned.base_offset
    _step("cleaned")
    kinds = ",".join(kind.name for kind, path in zip(FileKind, cleaned.paths(FileState.CLEANED).all()) if path.exists())
    write_atomically(directory / SWAP_RANGE_FILE, f"{base} {cleaned.end_offset} {kinds}\n".encode())
    _step("range-written")
    _rename_all(cleaned.paths(FileState.CLEANED).all(), FileState.SWAP)
    fsync_directory(directory)
    _step("swap-committed")
    retire(old_segments)
    _step("old-retired")
    _rename_all(cleaned.paths(FileState.SWAP).all(), FileState.LIVE)
    fsync_directory(directory)
    _step("live")
    segment = open_segment(base)
    (directory / SWAP_RANGE_FILE).unlink(missing_ok=True)
    return segment


def check_replaceable(cleaned: CleanedSegment, current: Sequence[LogSegment | None], successor_base: int | None) -> None:
    """Raise ``StalePlanError`` unless the log still holds the segments ``cleaned`` was built from, unchanged."""
    tp = parse_partition_dir_name(cleaned.directory.name)
    for snapshot, segment in zip(cleaned.replaces, current):
        if segment is None:
            raise StalePlanError(tp, f"segment {snapshot.base_offset} left the log (retention or truncation)")
        if segment.size != snapshot.size or segment.next_offset != snapshot.next_offset:
            raise StalePlanError(tp, f"segment {snapshot.base_offset} changed since it was cleaned (truncation)")
    if successor_base != cleaned.end_offset:
        raise StalePlanError(tp, f"the segment after the cleaned range no longer starts at {cleaned.end_offset}")


def discard_cleaned(cleaned: CleanedSegment) -> None:
    """Remove the ``.cleaned`` files of a cleaning that will not be swapped in."""
    for path in cleaned.paths(FileState.CLEANED).all():
        path.unlink(missing_ok=True)


def _rename_all(paths: Sequence[Path], state: FileState) -> None:
    """Rename the files of one segment into ``state``, indexes first and the ``.log`` last."""
    log, *indexes = paths
    for path in indexes:
        if path.exists():
            os.replace(path, _in_state(path, state))
    _step("swap-index-renamed" if state is FileState.SWAP else "live-index-renamed")
    os.replace(log, _in_state(log, state))


def _in_state(path: Path, state: FileState) -> Path:
    parsed = parse_segment_file_name(path.name)
    if parsed is None:
        raise ValueError(f"not a segment file: {path}")
    return segment_paths(path.parent, parsed.base_offset, state).all()[list(FileKind).index(parsed.kind)]


def recover_swap(directory: Path) -> bool:
    """Complete or roll back a swap a crash interrupted; return whether anything changed."""
    changed = False
    scratch = directory / SCRATCH_DIR
    if scratch.exists():
        shutil.rmtree(scratch, ignore_errors=True)
        changed = True
    range_file = directory / SWAP_RANGE_FILE
    if not range_file.exists():
        return changed
    swap_range = _read_range(range_file)
    if swap_range is not None:
        base, end, kinds = swap_range
        swap = segment_paths(directory, base, FileState.SWAP)
        if swap.log.exists():
            _complete(directory, base, end, kinds)
        else:
            for path in (*segment_paths(directory, base, FileState.CLEANED).all(), *swap.all()):
                path.unlink(missing_ok=True)
    range_file.unlink(missing_ok=True)
    fsync_directory(directory)
    return True


def _complete(directory: Path, base: int, end: int, kinds: frozenset[FileKind]) -> None:
    _log.info("completing the compaction swap of %s at %d (offsets up to %d)", directory.name, base, end)
    for name in os.listdir(directory):
        parsed = parse_segment_file_name(name)
        if parsed is None or parsed.kind is not FileKind.LOG or parsed.state is not FileState.LIVE:
            continue
        if base <= parsed.base_offset < end:
            for path in segment_paths(directory, parsed.base_offset).all():
                path.unlink(missing_ok=True)
    swap, live = segment_paths(directory, base, FileState.SWAP), segment_paths(directory, base)
    for kind, swap_path, live_path in zip(FileKind, swap.all(), live.all()):
        if kind is FileKind.LOG:
            continue
        if swap_path.exists():
            os.replace(swap_path, live_path)
        elif kind not in kinds:
            # The cleaned segment has no such file: a live one is what a replaced segment left.
            live_path.unlink(missing_ok=True)
    os.replace(swap.log, live.log)


def _read_range(path: Path) -> tuple[int, int, frozenset[FileKind]] | None:
    try:
        base_text, end_text, *kind_text = path.read_text().split()
        kinds = frozenset(FileKind[name] for name in "".join(kind_text).split(",") if name)
        return int(base_text), int(end_text), kinds
    except (OSError, ValueError, KeyError):
        # Written atomically, so unreadable means it never committed: nothing to complete.
        _log.warning("ignoring an unreadable %s", path)
        return None
