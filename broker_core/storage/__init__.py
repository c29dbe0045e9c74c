"""The log storage engine: Kafka-compatible segments, indexes and recovery.

Public entry points: :class:`LocalLog` (one partition's segments),
:class:`UnifiedLog` (a local log with its producer state and leader epochs,
what a partition appends through), :class:`LogManager` (all local logs under
``log.dirs``) and :class:`LogConfig`.
"""

from broker_core.storage.config import LogConfig
from broker_core.storage.errors import (
    AppendTooLargeError,
    ControlBatchFromClientError,
    CorruptCheckpointError,
    CorruptIndexError,
    InvalidAppendError,
    LogClosedError,
    LogConfigError,
    LogDirError,
    OffsetOutOfRangeError,
    RecordTooLargeError,
    StorageError,
)
from broker_core.storage.fetch_slice import FetchSlice
from broker_core.storage.files import TopicPartition
from broker_core.storage.local_log import LocalLog
from broker_core.storage.log_manager import LogManager
from broker_core.storage.log_validator import AppendInfo
from broker_core.storage.segment import SegmentInfo
from broker_core.storage.time_index import TimestampOffset
from broker_core.storage.txn_index import AbortedTxn
from broker_core.storage.unified_log import AppendResult, UnifiedLog

__all__ = [
    "AbortedTxn",
    "AppendInfo",
    "AppendResult",
    "AppendTooLargeError",
    "ControlBatchFromClientError",
    "CorruptCheckpointError",
    "CorruptIndexError",
    "FetchSlice",
    "InvalidAppendError",
    "LocalLog",
    "LogClosedError",
    "LogConfig",
    "LogConfigError",
    "LogDirError",
    "LogManager",
    "OffsetOutOfRangeError",
    "RecordTooLargeError",
    "SegmentInfo",
    "StorageError",
    "TimestampOffset",
    "TopicPartition",
    "UnifiedLog",
]
