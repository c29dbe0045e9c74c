"""Comparing the replicas of a partition on disk: the batches below the high watermark, byte for byte.

Kafka's promise is that every replica that may become leader serves the
same record at the same offset. Below the high watermark every in-sync
replica must therefore hold the same batches: same base and last offsets,
same leader epoch, same CRC, same bytes. :func:`compare_replicas` reads the
live segment files (``<base offset>.log``, in base-offset order) of each
replica's partition directory and returns every difference; an empty list
means the replicas agree.

Reading is done straight from the files, so it works on a stopped broker and,
below the high watermark, on a running one (only the tail past the high
watermark may be moving). A batch that cannot be read (truncated or failing
its CRC) ends that replica's readable log at its position; whatever the
other replicas hold from there up to the high watermark shows as missing.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from broker_core.storage.files import FileKind, FileState, parse_segment_file_name
from spate.records.batch import validate_batch
from spate.records.errors import CorruptRecordError


@dataclass(frozen=True)
class BatchCopy:
    """One batch as one replica holds it."""

    base_offset: int
    last_offset: int
    leader_epoch: int
    crc: int
    data: bytes
    segment: Path
    position: int


@dataclass(frozen=True)
class ReplicaLog:
    """A replica's readable batches, and why its reading stopped early (None when it read to the end)."""

    batches: tuple[BatchCopy, ...]
    unreadable: str | None = None
    # The first offset the replica holds: its first batch's, else its first segment's base offset.
    first_offset: int = 0


@dataclass(frozen=True)
class ReplicaDifference:
    base_offset: int
    kind: str  # "missing", "differs" or "unreadable"
    detail: str

    def __str__(self) -> str:
        return f"offset {self.base_offset}: {self.kind}: {self.detail}"


def read_replica_log(partition_dir: Path) -> ReplicaLog:
    """Every batch of the live segments of ``partition_dir``, up to the first one that cannot be read."""
    segments = []
    for path in partition_dir.iterdir() if partition_dir.is_dir() else ():
        name = parse_segment_file_name(path.name)
        if name is not None and name.kind is FileKind.LOG and name.state is FileState.LIVE:
            segments.append((name.base_offset, path))
    segments.sort()
    batches: list[BatchCopy] = []

    def result(unreadable: str | None = None) -> ReplicaLog:
        first = batches[0].base_offset if batches else (segments[0][0] if segments else 0)
        return ReplicaLog(tuple(batches), unreadable, first)

    for _, path in segments:
        data = path.read_bytes()
        position = 0
        while position < len(data):
            try:
                header = validate_batch(data, position)
            except (CorruptRecordError, struct.error, ValueError) as exc:
                return result(f"{path.name} at position {position}: {exc}")
            batches.append(BatchCopy(
                header.base_offset, header.last_offset, header.partition_leader_epoch, header.crc,
                bytes(data[position:position + header.size]), path, position,
            ))
            position += header.size
    return result()


def compare_replicas(
    replica_dirs: Mapping[int, Path], high_watermark: int, *, start_offset: int | None = None
) -> list[ReplicaDifference]:
    """Differences between the replicas (broker id → partition directory) in the batches that start below
    ``high_watermark``; from ``start_offset``, by default the highest first offset among the replicas (so
    retention having deleted more on one replica is no difference)."""
    logs = {broker_id: read_replica_log(path) for broker_id, path in sorted(replica_dirs.items())}
    if start_offset is None:
        start_offset = max((log.first_offset for log in logs.values()), default=0)
    by_offset: dict[int, dict[int, BatchCopy]] = {}
    for broker_id, log in logs.items():
        for batch in log.batches:
            if start_offset <= batch.base_offset < high_watermark:
                by_offset.setdefault(batch.base_offset, {})[broker_id] = batch
    differences = [
        ReplicaDifference(-1, "unreadable", f"broker {broker_id}: {log.unreadable}")
        for broker_id, log in logs.items() if log.unreadable is not None and _below(log, high_watermark)
    ]
    for base_offset in sorted(by_offset):
        copies = by_offset[base_offset]
        lacking = sorted(set(logs) - set(copies))
        if lacking:
            holders = sorted(copies)
            differences.append(ReplicaDifference(
                base_offset, "missing", f"brokers {lacking} have no batch here; brokers {holders} do",
            ))
        distinct = _distinct(copies)
        if len(distinct) > 1:
            differences.append(ReplicaDifference(base_offset, "differs", "; ".join(distinct)))
    return differences


def _below(log: ReplicaLog, high_watermark: int) -> bool:
    """Whether the unreadable point lies below the high watermark (past it, a tail may be in flight)."""
    return not log.batches or log.batches[-1].last_offset + 1 < high_watermark


def _distinct(copies: Mapping[int, BatchCopy]) -> list[str]:
    """One description per distinct version of the batch, naming the brokers holding it."""
    versions: dict[bytes, list[int]] = {}
    for broker_id, batch in sorted(copies.items()):
        versions.setdefault(batch.data, []).append(broker_id)
    if len(versions) <= 1:
        return []
    first = next(iter(versions))
    described = []
    for data, brokers in versions.items():
        batch = copies[brokers[0]]
        where = "" if data == first else f", {_first_difference(first, data)}"
        described.append(
            f"brokers {brokers}: last offset {batch.last_offset}, leader epoch {batch.leader_epoch}, "
            f"crc {batch.crc:#010x}, {len(data)} bytes{where}"
        )
    return described


def _first_difference(a: bytes, b: bytes) -> str:
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"first differing byte at {index}"
    return f"one is a prefix of the other ({min(len(a), len(b))} bytes)"
