"""Per-log settings, named after Kafka's topic-level configs.

``LogConfig`` is immutable; a topic config change produces a new one that the
log picks up with ``Log.update_config``. Field names are the Kafka names with
dots turned into underscores, so ``LogConfig(**kwargs)`` accepts the output of
the broker's topic config resolution directly.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from types import MappingProxyType
from typing import Mapping

from broker_core.storage.errors import LogConfigError

LONG_MAX = (1 << 63) - 1
INT_MAX = (1 << 31) - 1

CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"
_TIMESTAMP_TYPES = (CREATE_TIME, LOG_APPEND_TIME)
_CLEANUP_POLICIES = frozenset({"delete", "compact"})
# Who plans a compacted topic's cleaning: the broker's own cleaner, or a Spark batch job.
BROKER_PLANNER = "broker"
SPARK_PLANNER = "spark"
COMPACTION_PLANNERS = (BROKER_PLANNER, SPARK_PLANNER)

# Smallest entry of the two indexes; an index must hold at least one.
_MIN_INDEX_BYTES = 12
# A segment must hold at least one batch header plus the log overhead.
_MIN_SEGMENT_BYTES = 14


@dataclass(frozen=True, slots=True)
class LogConfig:
    """Settings of one partition's log. Sizes are bytes, times milliseconds."""

    segment_bytes: int = 1 << 30
    segment_ms: int = 7 * 24 * 3600 * 1000
    retention_ms: int = 7 * 24 * 3600 * 1000
    retention_bytes: int = -1
    index_interval_bytes: int = 4096
    segment_index_bytes: int = 10 * 1024 * 1024
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    file_delete_delay_ms: int = 60_000
    # Reserve a new segment's segment.bytes on disk when it is created (see preallocation.py).
    preallocate: bool = False
    max_message_bytes: int = 1_048_588
    message_timestamp_type: str = CREATE_TIME
    # How far a CreateTime timestamp may lie from the broker's clock; before/after fall back to difference.
    message_timestamp_difference_max_ms: int = LONG_MAX
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_after_max_ms: int = LONG_MAX
    # Whether Fetch requests before v4 (legacy message formats) may read the log, converted.
    message_downconversion_enable: bool = True
    cleanup_policy: str = "delete"
    # Compaction (read by the log cleaner).
    delete_retention_ms: int = 86_400_000
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    min_cleanable_dirty_ratio: float = 0.5
    spate_compaction_planner: str = BROKER_PLANNER
    # The topic's Delta archive (a table URI; empty: none); set, retention deletes only archived segments.
    spate_archive_path: str | None = ""

    def __post_init__(self) -> None:
        _check_range("segment.bytes", self.segment_bytes, _MIN_SEGMENT_BYTES, INT_MAX)
        _check_range("segment.ms", self.segment_ms, 1, LONG_MAX)
        _check_range("retention.ms", self.retention_ms, -1, LONG_MAX)
        _check_range("retention.bytes", self.retention_bytes, -1, LONG_MAX)
        _check_range("index.interval.bytes", self.index_interval_bytes, 0, INT_MAX)
        _check_range("segment.index.bytes", self.segment_index_bytes, _MIN_INDEX_BYTES, INT_MAX)
        _check_range("flush.messages", self.flush_messages, 1, LONG_MAX)
        _check_range("flush.ms", self.flush_ms, 0, LONG_MAX)
        _check_range("file.delete.delay.ms", self.file_delete_delay_ms, 0, LONG_MAX)
        _check_range("max.message.bytes", self.max_message_bytes, 0, INT_MAX)
        for name in ("difference", "before", "after"):
            _check_range(f"message.timestamp.{name}.max.ms", getattr(self, f"message_timestamp_{name}_max_ms"),
                         0, LONG_MAX)
        if not isinstance(self.preallocate, bool):
            raise LogConfigError("preallocate", self.preallocate, "expected true or false")
        if not isinstance(self.message_downconversion_enable, bool):
            raise LogConfigError("message.downconversion.enable", self.message_downconversion_enable,
                                 "expected true or false")
        if self.message_timestamp_type not in _TIMESTAMP_TYPES:
            raise LogConfigError(
                "message.timestamp.type", self.message_timestamp_type, f"expected one of {', '.join(_TIMESTAMP_TYPES)}"
            )
        _check_range("delete.retention.ms", self.delete_retention_ms, 0, LONG_MAX)
        _check_range("min.compaction.lag.ms", self.min_compaction_lag_ms, 0, LONG_MAX)
        _check_range("max.compaction.lag.ms", self.max_compaction_lag_ms, 1, LONG_MAX)
        ratio = self.min_cleanable_dirty_ratio
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0.0 <= ratio <= 1.0:
            raise LogConfigError("min.cleanable.dirty.ratio", ratio, "expected a value in [0.0, 1.0]")
        if self.spate_compaction_planner not in COMPACTION_PLANNERS:
            raise LogConfigError(
                "spate.compaction.planner", self.spate_compaction_planner, f"expected one of {', '.join(COMPACTION_PLANNERS)}"
            )
        policies = _split_policy(self.cleanup_policy)
        if not policies or not policies <= _CLEANUP_POLICIES:
            raise LogConfigError("cleanup.policy", self.cleanup_policy, "expected delete, compact or both")

    @property
    def log_append_time(self) -> bool:
        """True when the broker, not the producer, sets batch timestamps."""
        return self.message_timestamp_type == LOG_APPEND_TIME

    @property
    def preallocate_bytes(self) -> int:
        """Disk space a new segment reserves when created: segment.bytes with preallocate, else none."""
        return self.segment_bytes if self.preallocate else 0

    @property
    def timestamp_before_max_ms(self) -> int:
        """How far in the past a CreateTime timestamp may be (Kafka: before.max.ms unless unset, then difference)."""
        before = self.message_timestamp_before_max_ms
        return before if before != LONG_MAX else self.message_timestamp_difference_max_ms

    @property
    def timestamp_after_max_ms(self) -> int:
        """How far in the future a CreateTime timestamp may be (after.max.ms unless unset, then difference)."""
        after = self.message_timestamp_after_max_ms
        return after if after != LONG_MAX else self.message_timestamp_difference_max_ms

    @property
    def delete_enabled(self) -> bool:
        return "delete" in _split_policy(self.cleanup_policy)

    @property
    def archiving(self) -> bool:
        """True when the topic keeps a Delta archive, so retention waits for it."""
        return bool(self.spate_archive_path)

    @property
    def compact_enabled(self) -> bool:
        return "compact" in _split_policy(self.cleanup_policy)

    @property
    def max_segment_ms(self) -> int:
        """How old the active segment may get: ``segment.ms``, and for a compacted log at most
        ``max.compaction.lag.ms`` (the active segment is never cleaned, so it must roll in time)."""
        if self.compact_enabled:
            return min(self.segment_ms, self.max_compaction_lag_ms)
        return self.segment_ms

    @classmethod
    def from_topic_configs(cls, values: Mapping[str, object], base: LogConfig | None = None) -> LogConfig:
        """A config from Kafka-named values (``{"segment.bytes": "1048576"}``).

        Names this class does not hold are ignored (they belong to other
        layers); values may be ints or their decimal text.
        """
        start = base if base is not None else cls()
        changes: dict[str, object] = {}
        for kafka_name, value in values.items():
            field_name = KAFKA_NAMES.get(kafka_name)
            if field_name is None:
                continue
            changes[field_name] = _coerce(kafka_name, field_name, value)
        return replace(start, **changes)

    def to_topic_configs(self) -> dict[str, str]:
        """The Kafka-named text form of every field."""
        return {kafka: str(getattr(self, field_name)) for kafka, field_name in KAFKA_NAMES.items()}


KAFKA_NAMES: Mapping[str, str] = MappingProxyType({f.name.replace("_", "."): f.name for f in fields(LogConfig)})

_STRING_FIELDS = frozenset({"message_timestamp_type", "cleanup_policy", "spate_compaction_planner",
                            "spate_archive_path"})
_FLOAT_FIELDS = frozenset({"min_cleanable_dirty_ratio"})
_BOOLEAN_FIELDS = frozenset({"message_downconversion_enable", "preallocate"})


def _coerce(kafka_name: str, field_name: str, value: object) -> object:
    if field_name in _STRING_FIELDS:
        if value is None:
            return None
        if isinstance(value, (tuple, list)):
            return ",".join(str(v) for v in value)
        return str(value)
    if field_name in _BOOLEAN_FIELDS:
        return _boolean(kafka_name, value)
    if field_name in _FLOAT_FIELDS and not isinstance(value, bool):
        try:
            return float(str(value).strip()) if not isinstance(value, (int, float)) else float(value)
        except ValueError:
            raise LogConfigError(kafka_name, value, "expected a decimal number") from None
    if isinstance(value, bool):
        raise LogConfigError(kafka_name, value, "expected an integer")
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        raise LogConfigError(kafka_name, value, "expected an integer") from None


def _boolean(kafka_name: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise LogConfigError(kafka_name, value, "expected true or false")
    return text == "true"


def _split_policy(policy: str) -> frozenset[str]:
    return frozenset(part.strip() for part in policy.split(",") if part.strip())


def _check_range(name: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise LogConfigError(name, value, "expected an integer")
    if not low <= value <= high:
        raise LogConfigError(name, value, f"expected a value in [{low}, {high}]")
