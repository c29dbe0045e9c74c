"""Kafka-style checkpoint files, replaced atomically.

Text layout (Kafka's)::

    0                  version
    2                  number of entries
    orders 0 1200      one entry per line, fields separated by whitespace
    orders 1 980

Writes go through :func:`broker_core.storage.fs.write_atomically` (``<name>.tmp``,
fsync, rename, fsync of the directory), so after a crash the file holds either
the old or the new content, never a mix. A leftover ``.tmp`` is ignored and
overwritten.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Generic, Iterable, Mapping, TypeVar

from broker_core.storage.errors import CorruptCheckpointError, LogDirError
from broker_core.storage.files import TopicPartition
from broker_core.storage.fs import write_atomically

T = TypeVar("T")

CHECKPOINT_VERSION = 0


class CheckpointFile(Generic[T]):
    """A versioned list of entries, each formatted as one line of fields."""

    def __init__(
        self,
        path: Path,
        *,
        version: int,
        format_entry: Callable[[T], str],
        parse_fields: Callable[[list[str]], T],
        fields_per_entry: int,
    ) -> None:
        self.path = path
        self._version = version
        self._format = format_entry
        self._parse = parse_fields
        self._fields = fields_per_entry

    def write(self, entries: Iterable[T], *, sync: bool = True, sync_directory: bool = True) -> None:
        """Replace the file atomically with ``entries``; durable at once unless ``sync`` is false (its
        directory entry only once the directory is fsynced, when ``sync_directory`` is false)."""
        lines = [self._format(entry) for entry in entries]
        text = f"{self._version}\n{len(lines)}\n" + "".join(line + "\n" for line in lines)
        try:
            write_atomically(self.path, text.encode("utf-8"), sync=sync, sync_directory=sync_directory)
        except OSError as exc:
            raise LogDirError(self.path, f"cannot write checkpoint: {exc.strerror or exc}") from exc

    def read(self) -> list[T]:
        """The entries, or an empty list when the file does not exist.

        Raises ``CorruptCheckpointError`` naming the file and line for anything
        malformed.
        """
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError) as exc:
            raise CorruptCheckpointError(self.path, str(exc)) from exc
        return self.parse(text)

    def parse(self, text: str) -> list[T]:
        """The entries of the file's ``text`` (read by the caller); raises as ``read`` does."""
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) < 2:
            raise CorruptCheckpointError(self.path, "missing the version or count line")
        version = _parse_int(self.path, 1, lines[0])
        if version != self._version:
            raise CorruptCheckpointError(self.path, f"line 1: unsupported version {version}, expected {self._version}")
        count = _parse_int(self.path, 2, lines[1])
        body = lines[2:]
        if count != len(body):
            raise CorruptCheckpointError(self.path, f"line 2: declares {count} entries, the file has {len(body)}")
        entries = []
        for number, line in enumerate(body, start=3):
            # Kafka's own reader splits on any run of whitespace; so do we.
            fields = line.split()
            if len(fields) != self._fields:
                raise CorruptCheckpointError(
                    self.path, f"line {number}: expected {self._fields} space-separated fields, got {line!r}"
                )
            try:
                entries.append(self._parse(fields))
            except ValueError as exc:
                raise CorruptCheckpointError(self.path, f"line {number}: {exc}") from None
        return entries


class OffsetCheckpointFile:
    """``topic partition offset`` entries: recovery points, log start offsets."""

    def __init__(self, path: Path) -> None:
        self._file: CheckpointFile[tuple[TopicPartition, int]] = CheckpointFile(
            path,
            version=CHECKPOINT_VERSION,
            format_entry=lambda entry: f"{entry[0].topic} {entry[0].partition} {entry[1]}",
            parse_fields=_parse_offset_entry,
            fields_per_entry=3,
        )

    @property
    def path(self) -> Path:
        return self._file.path

    def write(self, offsets: Mapping[TopicPartition, int]) -> None:
        self._file.write(sorted(offsets.items()))

    def read(self) -> dict[TopicPartition, int]:
        result: dict[TopicPartition, int] = {}
        for tp, offset in self._file.read():
            if tp in result:
                raise CorruptCheckpointError(self.path, f"{tp} appears twice")
            result[tp] = offset
        return result


def _parse_offset_entry(fields: list[str]) -> tuple[TopicPartition, int]:
    topic, partition_text, offset_text = fields
    partition = _strict_int(partition_text, "partition")
    offset = _strict_int(offset_text, "offset")
    if partition < 0:
        raise ValueError(f"negative partition {partition}")
    if offset < 0:
        raise ValueError(f"negative offset {offset}")
    return TopicPartition(topic, partition), offset


def _strict_int(text: str, what: str) -> int:
    body = text[1:] if text.startswith("-") else text
    if not body.isascii() or not body.isdigit():
        raise ValueError(f"{what} {text!r} is not an integer")
    return int(text)


def _parse_int(path: Path, line: int, text: str) -> int:
    try:
        return _strict_int(text.strip(), "value")
    except ValueError:
        raise CorruptCheckpointError(path, f"line {line}: {text!r} is not an integer") from None
