"""Names of everything storage keeps on disk; the only module that knows them.

Layout of one log dir (Kafka's)::

    <log.dir>/
        .kafka_cleanshutdown                 written on clean shutdown
        recovery-point-offset-checkpoint
        log-start-offset-checkpoint
        replication-offset-checkpoint        each hosted partition's high watermark
        <topic>-<partition>/
            00000000000000000000.log         record batches as on the wire
            00000000000000000000.index       sparse offset -> position
            00000000000000000000.timeindex   sparse timestamp -> offset
            00000000000000000000.txnindex    aborted transactions (only once one aborts)
            00000000000000000000.snapshot    producer state as of an offset (the newest two)
            leader-epoch-checkpoint          where each leader epoch started writing
        <topic>-<partition>.<id>-delete/      a deleted partition awaiting removal

A segment file being deleted carries an extra ``.deleted`` suffix; compaction
writes ``.cleaned`` files and commits them by renaming to ``.swap``. A file
replaced atomically is written as ``<name>.tmp`` first.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from pathlib import Path

from spate.structs import TopicPartition

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
SNAPSHOT_SUFFIX = ".snapshot"

DELETED_SUFFIX = ".deleted"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
TEMP_SUFFIX = ".tmp"

DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"

OFFSET_DIGITS = 20

_TOPIC_CHARS = re.compile(r"[a-zA-Z0-9._-]+")
_OFFSET_NAME = re.compile(r"(\d{20})(\.[a-z]+)(\.[a-z]+)?")
_SNAPSHOT_NAME = re.compile(r"(\d{20})" + re.escape(SNAPSHOT_SUFFIX))


class FileKind(enum.Enum):
    """The role of a file in a segment."""

    LOG = LOG_SUFFIX
    INDEX = INDEX_SUFFIX
    TIME_INDEX = TIME_INDEX_SUFFIX
    TXN_INDEX = TXN_INDEX_SUFFIX


class FileState(enum.Enum):
    """Whether a segment file is live or in one of the temporary states."""

    LIVE = ""
    DELETED = DELETED_SUFFIX
    CLEANED = CLEANED_SUFFIX
    SWAP = SWAP_SUFFIX


@dataclass(frozen=True, slots=True)
class SegmentFileName:
    base_offset: int
    kind: FileKind
    state: FileState = FileState.LIVE

    def __str__(self) -> str:
        return f"{self.base_offset:0{OFFSET_DIGITS}d}{self.kind.value}{self.state.value}"


def segment_file_name(base_offset: int, kind: FileKind, state: FileState = FileState.LIVE) -> str:
    """``00000000000000000042.log`` for base offset 42."""
    if base_offset < 0:
        raise ValueError(f"a segment base offset cannot be negative: {base_offset}")
    return str(SegmentFileName(base_offset, kind, state))


def parse_segment_file_name(name: str) -> SegmentFileName | None:
    """The parts of a segment file name, or None for any other file."""
    match = _OFFSET_NAME.fullmatch(name)
    if match is None:
        return None
    digits, kind_text, state_text = match.groups()
    try:
        kind = FileKind(kind_text)
        state = FileState(state_text or "")
    except ValueError:
        return None
    return SegmentFileName(int(digits), kind, state)


class SegmentPaths:
    """The files of one segment in one state.

    Each path is made on first use: a broker opening thousands of logs
    would otherwise build four paths per segment that it mostly never needs.
    """

    __slots__ = ("_directory", "_base_offset", "_state", "_made")

    def __init__(self, directory: Path, base_offset: int, state: FileState = FileState.LIVE) -> None:
        if base_offset < 0:
            raise ValueError(f"a segment base offset cannot be negative: {base_offset}")
        self._directory = directory
        self._base_offset = base_offset
        self._state = state
        self._made: dict[FileKind, Path] = {}

    def _path(self, kind: FileKind) -> Path:
        path = self._made.get(kind)
        if path is None:
            path = self._made[kind] = self._directory / segment_file_name(self._base_offset, kind, self._state)
        return path

    @property
    def log(self) -> Path:
        return self._path(FileKind.LOG)

    @property
    def index(self) -> Path:
        return self._path(FileKind.INDEX)

    @property
    def time_index(self) -> Path:
        return self._path(FileKind.TIME_INDEX)

    @property
    def txn_index(self) -> Path:
        return self._path(FileKind.TXN_INDEX)

    def all(self) -> tuple[Path, ...]:
        return (self.log, self.index, self.time_index, self.txn_index)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SegmentPaths) and other.all() == self.all()

    def __hash__(self) -> int:
        return hash(self.all())

    def __repr__(self) -> str:
        return f"SegmentPaths({self.log})"


def segment_paths(directory: Path, base_offset: int, state: FileState = FileState.LIVE) -> SegmentPaths:
    return SegmentPaths(directory, base_offset, state)


def with_state(path: Path, state: FileState) -> Path:
    """``path`` renamed into ``state`` (e.g. ``N.log`` -> ``N.log.deleted``)."""
    parsed = parse_segment_file_name(path.name)
    if parsed is None:
        raise ValueError(f"not a segment file name: {path.name}")
    return path.with_name(str(SegmentFileName(parsed.base_offset, parsed.kind, state)))


def snapshot_file_name(offset: int) -> str:
    """``00000000000000000042.snapshot``: producer state as of offset 42."""
    if offset < 0:
        raise ValueError(f"a snapshot offset cannot be negative: {offset}")
    return f"{offset:0{OFFSET_DIGITS}d}{SNAPSHOT_SUFFIX}"


def parse_snapshot_file_name(name: str) -> int | None:
    """The offset a producer-state snapshot file is named after, or None for any other file."""
    match = _SNAPSHOT_NAME.fullmatch(name)
    return int(match.group(1)) if match else None


def is_snapshot_temp_file_name(name: str) -> bool:
    """Whether ``name`` is a snapshot's unfinished atomic write (``N.snapshot.tmp``)."""
    return name.endswith(TEMP_SUFFIX) and parse_snapshot_file_name(name[: -len(TEMP_SUFFIX)]) is not None


def partition_dir_name(tp: TopicPartition) -> str:
    """``orders-3`` for partition 3 of ``orders``."""
    if not _TOPIC_CHARS.fullmatch(tp.topic) or tp.topic in (".", ".."):
        raise ValueError(f"topic name {tp.topic!r} cannot name a partition directory")
    if tp.partition < 0:
        raise ValueError(f"partition {tp.partition} is negative")
    return f"{tp.topic}-{tp.partition}"


def parse_partition_dir_name(name: str) -> TopicPartition | None:
    """The partition a directory holds, or None if the name is not ``<topic>-<n>``.

    Topic names may themselves contain ``-`` and ``.``; the partition is the
    part after the last ``-``.
    """
    topic, dash, number = name.rpartition("-")
    if not dash or not topic or not number.isdigit() or not number.isascii():
        return None
    if not _TOPIC_CHARS.fullmatch(topic) or topic in (".", ".."):
        return None
    if len(number) > 1 and number.startswith("0"):
        return None
    return TopicPartition(topic, int(number))


def deletion_dir_name(tp: TopicPartition, unique_id: str) -> str:
    """Name a partition directory takes once its deletion is scheduled.

    The unique id keeps a re-created partition of the same name from clashing.
    """
    if not unique_id.isalnum():
        raise ValueError(f"unique id must be alphanumeric: {unique_id!r}")
    return f"{partition_dir_name(tp)}.{unique_id}{DELETE_DIR_SUFFIX}"


def is_deletion_dir_name(name: str) -> bool:
    return name.endswith(DELETE_DIR_SUFFIX) and "." in name


def is_future_dir_name(name: str) -> bool:
    return name.endswith(FUTURE_DIR_SUFFIX) and "." in name


def temp_path(path: Path) -> Path:
    """Where an atomically replaced file is written before its rename."""
    return path.with_name(path.name + TEMP_SUFFIX)
