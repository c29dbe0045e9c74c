"""Durable writes: the one place that fsyncs files and directories by path.

A file written with :func:`write_atomically` goes to ``<name>.tmp`` first, is
fsynced, renamed over ``<name>`` and the directory is fsynced, so after a
crash ``<name>`` holds either its old content or the complete new one, never
a mix, and the rename itself survives. A crash before the rename leaves a
stray ``<name>.tmp``; readers ignore it and the next write replaces it.

Creating, renaming or unlinking a file changes its directory, not the file:
:func:`fsync_directory` makes such a change durable.

Segment and index files, which stay open while they are written, fsync their
own descriptors; these helpers serve the small files that are replaced whole
(checkpoints, producer-state snapshots, the embedded metadata store, the
clean-shutdown marker).
"""

from __future__ import annotations

import os
from pathlib import Path

from broker_core.storage.files import temp_path


def write_atomically(path: Path, data: bytes, *, sync: bool = True, sync_directory: bool = True) -> None:
    """Replace ``path`` with ``data``: temp file, fsync, rename, fsync of the directory.

    With ``sync=False`` both fsyncs are left out: readers still see the old or
    the new content whole (the rename is atomic), but after a power failure
    either may be there until :func:`fsync_file` and :func:`fsync_directory`
    make the new one durable. With ``sync_directory=False`` only the
    directory's fsync is left to the caller, who may make several files'
    renames durable with one.

    Raises ``OSError`` when any step fails; the temp file is removed then
    (best effort) and ``path`` keeps its old content.
    """
    temp = temp_path(path)
    try:
        with open(temp, "wb") as f:
            f.write(data)
            f.flush()
            if sync:
                os.fsync(f.fileno())
        os.replace(temp, path)
    except OSError:
        _remove_quietly(temp)
        raise
    if sync and sync_directory:
        fsync_directory(path.parent)


def fsync_file(path: Path) -> None:
    """fsync the content of the file at ``path``."""
    _fsync_path(path)


def fsync_directory(directory: Path) -> None:
    """fsync ``directory`` so that files created, renamed or removed in it stay so after a crash."""
    _fsync_path(directory)


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_quietly(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass  # the write already failed; a leftover temp file is ignored and overwritten later
