"""Errors raised by the log storage engine.

Each error carries the Kafka error code the broker answers with
(``error_code``) and whether a client may retry (``retriable``). Malformed
batch bytes are not storage's to describe: they raise
:class:`spate.records.errors.CorruptRecordError` (CORRUPT_MESSAGE).
"""

from __future__ import annotations

from pathlib import Path

# Kafka error codes, kept as plain numbers so storage does not depend on the
# protocol package.
_OFFSET_OUT_OF_RANGE = 1
_CORRUPT_MESSAGE = 2
_MESSAGE_TOO_LARGE = 10
_RECORD_LIST_TOO_LARGE = 18
_INVALID_TIMESTAMP = 32
_INVALID_CONFIG = 40
_KAFKA_STORAGE_ERROR = 56
_INVALID_RECORD = 87
_UNKNOWN_SERVER_ERROR = -1


class StorageError(Exception):
    """Base of every storage error."""

    error_code: int = _UNKNOWN_SERVER_ERROR
    retriable: bool = False


class OffsetOutOfRangeError(StorageError):
    """A read or DeleteRecords named an offset outside ``[log_start, log_end]``."""

    error_code = _OFFSET_OUT_OF_RANGE

    def __init__(self, offset: int, log_start: int, log_end: int, *, what: str = "offset") -> None:
        super().__init__(f"{what} {offset} is outside the log's range [{log_start}, {log_end}]")
        self.offset = offset
        self.log_start = log_start
        self.log_end = log_end


class InvalidAppendError(StorageError):
    """An append the log refuses as a whole: empty, offsets going backwards,
    an offset range that does not fit a segment, a batch that lies about its
    record count."""

    error_code = _INVALID_RECORD


class ControlBatchFromClientError(InvalidAppendError):
    """A produce request carried a control batch; only the broker writes markers (INVALID_RECORD)."""


class InvalidTimestampError(InvalidAppendError):
    """A producer's batch claims LogAppendTime, which only the broker sets (INVALID_TIMESTAMP, as Kafka)."""

    error_code = _INVALID_TIMESTAMP


class InvalidRecordsError(InvalidAppendError):
    """Records the topic refuses, named by their index in their batch (Produce v8+ ``record_errors``).

    A compacted topic refuses records without a key, as Kafka's LogValidator does.
    """

    def __init__(self, message: str, record_errors: tuple[tuple[int, str], ...]) -> None:
        super().__init__(message)
        self.record_errors = record_errors


class RecordTooLargeError(InvalidAppendError):
    """A single batch is larger than the topic's ``max.message.bytes``."""

    error_code = _MESSAGE_TOO_LARGE

    def __init__(self, batch_size: int, max_size: int, position: int) -> None:
        super().__init__(
            f"batch at position {position} is {batch_size} bytes, "
            f"over the topic's max.message.bytes of {max_size}"
        )
        self.batch_size = batch_size
        self.max_size = max_size
        self.position = position


class AppendTooLargeError(InvalidAppendError):
    """An append as a whole is larger than a segment may ever be (``segment.bytes``)."""

    error_code = _RECORD_LIST_TOO_LARGE

    def __init__(self, size: int, segment_bytes: int) -> None:
        super().__init__(f"append of {size} bytes is larger than segment.bytes ({segment_bytes})")
        self.size = size
        self.segment_bytes = segment_bytes


class CorruptIndexError(StorageError):
    """An index file cannot be trusted. The loader rebuilds it from the log."""

    error_code = _CORRUPT_MESSAGE

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"corrupt index {path}: {reason}")
        self.path = path
        self.reason = reason


class LogDirError(StorageError):
    """A log directory or one of its files cannot be used: missing, not a
    directory, not writable, or an I/O error while writing."""

    error_code = _KAFKA_STORAGE_ERROR
    retriable = True

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"log dir problem at {path}: {reason}")
        self.path = path
        self.reason = reason


class CorruptCheckpointError(LogDirError):
    """A checkpoint file exists but cannot be parsed."""

    retriable = False

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(path, f"unparsable checkpoint file: {reason}")


class LogClosedError(StorageError):
    """The log was closed or deleted; it takes no more appends or reads."""

    error_code = _KAFKA_STORAGE_ERROR
    retriable = True

    def __init__(self, path: Path) -> None:
        super().__init__(f"log {path} is closed")
        self.path = path


class LogConfigError(StorageError, ValueError):
    """A ``LogConfig`` value is out of the range storage can honour."""

    error_code = _INVALID_CONFIG

    def __init__(self, name: str, value: object, reason: str) -> None:
        super().__init__(f"invalid log config {name}={value!r}: {reason}")
        self.name = name
        self.value = value
