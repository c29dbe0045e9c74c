"""A client's CreateTime timestamps must lie within message.timestamp.before/after.max.ms of the broker's clock."""

from __future__ import annotations

import pytest

from broker_core.storage.config import LogConfig
from broker_core.storage.errors import InvalidTimestampError
from broker_core.storage.log_validator import validate_append
from spate.records import Compression, Record, build_batch

NOW = 1_800_000_000_000
HOUR = 3_600_000


def batch(*timestamps: int, compression: Compression = Compression.NONE) -> bytes:
    return build_batch([Record(i, ts, b"k", b"v") for i, ts in enumerate(timestamps)], compression=compression)


def append(data: bytes, config: LogConfig, **kwargs) -> None:
    validate_append(data, config, next_offset=0, assign_offsets=True, now_ms=NOW, allow_control=False, **kwargs)


def test_a_timestamp_too_far_ahead_is_refused_naming_the_setting() -> None:
    config = LogConfig(message_timestamp_after_max_ms=HOUR)
    append(batch(NOW + HOUR), config)
    with pytest.raises(InvalidTimestampError, match=r"message.timestamp.after.max.ms \(3600000 ms\) ahead"):
        append(batch(NOW, NOW + HOUR + 1), config)


@pytest.mark.parametrize("compression", [Compression.NONE, Compression.LZ4])
def test_any_record_too_far_behind_is_refused_not_only_the_first(compression: Compression) -> None:
    config = LogConfig(message_timestamp_before_max_ms=HOUR)
    append(batch(NOW - HOUR, NOW, compression=compression), config)
    with pytest.raises(InvalidTimestampError, match=r"timestamp 1799996399999 .*before.max.ms \(3600000 ms\)"):
        append(batch(NOW, NOW - HOUR - 1, NOW, compression=compression), config)


def test_before_and_after_fall_back_to_the_deprecated_difference_setting() -> None:
    config = LogConfig(message_timestamp_difference_max_ms=HOUR)
    assert (config.timestamp_before_max_ms, config.timestamp_after_max_ms) == (HOUR, HOUR)
    with pytest.raises(InvalidTimestampError, match="before.max.ms"):
        append(batch(NOW - 2 * HOUR), config)
    with pytest.raises(InvalidTimestampError, match="after.max.ms"):
        append(batch(NOW + 2 * HOUR), config)
    overridden = LogConfig(message_timestamp_difference_max_ms=HOUR, message_timestamp_after_max_ms=3 * HOUR)
    append(batch(NOW + 2 * HOUR), overridden)


def test_records_without_a_timestamp_and_the_brokers_own_appends_are_not_checked() -> None:
    config = LogConfig(message_timestamp_before_max_ms=0, message_timestamp_after_max_ms=0)
    append(batch(-1, -1), config)
    validate_append(batch(0), config, next_offset=0, assign_offsets=False, now_ms=NOW)  # replication


def test_a_log_append_time_topic_stamps_instead_of_checking() -> None:
    config = LogConfig(message_timestamp_type="LogAppendTime", message_timestamp_after_max_ms=0)
    append(batch(NOW + HOUR), config)


def test_the_limits_come_from_topic_configs_and_must_not_be_negative() -> None:
    config = LogConfig.from_topic_configs({"message.timestamp.before.max.ms": "1000",
                                           "message.timestamp.after.max.ms": "2000"})
    assert (config.timestamp_before_max_ms, config.timestamp_after_max_ms) == (1000, 2000)
    with pytest.raises(ValueError, match="message.timestamp.after.max.ms"):
        LogConfig.from_topic_configs({"message.timestamp.after.max.ms": "-1"})
