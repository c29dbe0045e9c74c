"""Producer-state snapshot files: their byte layout and where they live.

A snapshot ``<partition_dir>/<20-digit offset>.snapshot`` holds every
producer's entry as of that offset (layout in :func:`encode_snapshot`).
Loading it and replaying the log from the offset on rebuilds the state.

Crash behaviour: a snapshot is written with
:func:`broker_core.storage.fs.write_atomically` (temporary file, fsync,
rename, fsync of the directory), so a crash leaves whole snapshots and at
most a stray ``.snapshot.tmp``, which :func:`remove_temp_files` clears. A
snapshot damaged later fails its CRC-32C and :func:`decode_snapshot` raises
``CorruptSnapshotError``; the manager then falls back to an older one.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Iterable

from crc32c import crc32c

from broker_core.storage.files import is_snapshot_temp_file_name, parse_snapshot_file_name, snapshot_file_name
from broker_core.storage.fs import write_atomically
from broker_core.storage.producer_state.entry import NUM_BATCHES_TO_RETAIN, BatchMetadata, ProducerStateEntry
from broker_core.storage.producer_state.errors import CorruptSnapshotError

SNAPSHOT_VERSION = 1

_SNAPSHOT_HEADER = struct.Struct(">hIi")  # version, crc, entry count
_SNAPSHOT_CRC_START = 6  # the CRC covers everything after itself
_ENTRY = struct.Struct(">qhiqqb")
_BATCH = struct.Struct(">iiqqq")


def snapshot_path(partition_dir: Path, offset: int) -> Path:
    """``<partition_dir>/<20-digit offset>.snapshot``."""
    return partition_dir / snapshot_file_name(offset)


def snapshot_offsets(partition_dir: Path) -> list[int]:
    """Offsets of the snapshot files in ``partition_dir``, ascending."""
    if not partition_dir.is_dir():
        return []
    offsets = []
    for path in partition_dir.iterdir():
        offset = parse_snapshot_file_name(path.name)
        if offset is not None and path.is_file():
            offsets.append(offset)
    return sorted(offsets)


def write_snapshot(
    partition_dir: Path, offset: int, entries: Iterable[ProducerStateEntry], *, sync_directory: bool = True
) -> Path:
    """Durably write the snapshot as of ``offset`` (its directory entry left to the caller unless
    ``sync_directory``); return its path."""
    path = snapshot_path(partition_dir, offset)
    write_atomically(path, encode_snapshot(entries), sync_directory=sync_directory)
    return path


def read_snapshot(partition_dir: Path, offset: int) -> list[ProducerStateEntry]:
    """The entries of the snapshot as of ``offset``; ``CorruptSnapshotError`` when it cannot be trusted."""
    path = snapshot_path(partition_dir, offset)
    return decode_snapshot(path.read_bytes(), source=str(path))


def delete_snapshot(partition_dir: Path, offset: int) -> None:
    snapshot_path(partition_dir, offset).unlink(missing_ok=True)


def remove_temp_files(partition_dir: Path) -> None:
    """Remove what a crash during a snapshot write left behind."""
    if not partition_dir.is_dir():
        return
    for path in partition_dir.iterdir():
        if is_snapshot_temp_file_name(path.name):
            path.unlink(missing_ok=True)


def encode_snapshot(entries: Iterable[ProducerStateEntry]) -> bytes:
    """Serialize producer entries (big-endian)::

        0   version                  int16   1
        2   crc                      uint32  CRC-32C of bytes 6..end
        6   entry count              int32
        10  entries, by producer id:
              producer_id              int64
              producer_epoch           int16
              coordinator_epoch        int32
              last_timestamp           int64
              current_txn_first_offset int64   -1: no open transaction
              batch count              int8    0..5
              batches, oldest first:
                first_seq     int32
                last_seq      int32
                first_offset  int64
                last_offset   int64
                timestamp     int64
    """
    ordered = sorted(entries, key=lambda e: e.producer_id)
    body = bytearray(struct.pack(">i", len(ordered)))
    for entry in ordered:
        txn_first = -1 if entry.current_txn_first_offset is None else entry.current_txn_first_offset
        body += _ENTRY.pack(
            entry.producer_id,
            entry.producer_epoch,
            entry.coordinator_epoch,
            entry.last_timestamp,
            txn_first,
            len(entry.batches),
        )
        for b in entry.batches:
            body += _BATCH.pack(b.first_seq, b.last_seq, b.first_offset, b.last_offset, b.timestamp)
    return struct.pack(">hI", SNAPSHOT_VERSION, crc32c(bytes(body))) + bytes(body)


def decode_snapshot(data: bytes, *, source: str = "<bytes>") -> list[ProducerStateEntry]:
    """Parse ``encode_snapshot`` output; any deviation raises ``CorruptSnapshotError``."""
    if len(data) < _SNAPSHOT_HEADER.size:
        raise CorruptSnapshotError(source, f"{len(data)} bytes, shorter than the {_SNAPSHOT_HEADER.size}-byte header")
    version, stored_crc, count = _SNAPSHOT_HEADER.unpack_from(data, 0)
    if version != SNAPSHOT_VERSION:
        raise CorruptSnapshotError(source, f"unknown version {version}")
    actual_crc = crc32c(data[_SNAPSHOT_CRC_START:])
    if actual_crc != stored_crc:
        raise CorruptSnapshotError(source, f"CRC mismatch: stored {stored_crc:#010x}, computed {actual_crc:#010x}")
    if count < 0:
        raise CorruptSnapshotError(source, f"negative entry count {count}")
    entries: list[ProducerStateEntry] = []
    pos = _SNAPSHOT_HEADER.size
    for _ in range(count):
        if pos + _ENTRY.size > len(data):
            raise CorruptSnapshotError(source, f"entry at byte {pos} is truncated")
        pid, epoch, coordinator_epoch, last_ts, txn_first, n_batches = _ENTRY.unpack_from(data, pos)
        pos += _ENTRY.size
        if not 0 <= n_batches <= NUM_BATCHES_TO_RETAIN:
            raise CorruptSnapshotError(source, f"producer {pid} lists {n_batches} batches")
        if pos + n_batches * _BATCH.size > len(data):
            raise CorruptSnapshotError(source, f"batches of producer {pid} are truncated")
        batches = []
        for _ in range(n_batches):
            batches.append(BatchMetadata(*_BATCH.unpack_from(data, pos)))
            pos += _BATCH.size
        entries.append(
            ProducerStateEntry(
                producer_id=pid,
                producer_epoch=epoch,
                batches=tuple(batches),
                coordinator_epoch=coordinator_epoch,
                current_txn_first_offset=None if txn_first < 0 else txn_first,
                last_timestamp=last_ts,
            )
        )
    if pos != len(data):
        raise CorruptSnapshotError(source, f"{len(data) - pos} trailing bytes")
    return entries
