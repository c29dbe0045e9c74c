"""The consumer's settings: every keyword ``Consumer`` takes, its default, and the error a bad value gets."""

from __future__ import annotations

import random
import re
import socket
import time

import pytest

from spate.client import Consumer, RangeAssignor
from spate.client.consumer.consumer_config import ConsumerConfig
from spate.client.consumer.subscription_state import OffsetResetStrategy
from spate.structs import IsolationLevel

NOWHERE = "127.0.0.1:1"

# Every keyword Consumer(...) took when its constructor listed them one by one, with its default then.
SETTINGS = {
    "isolation_level": "read_uncommitted",
    "fetch_min_bytes": 1,
    "fetch_max_wait_ms": 500,
    "max_partition_fetch_bytes": 1_048_576,
    "fetch_max_bytes": 52_428_800,
    "auto_offset_reset": "latest",
    "check_crcs": True,
    "request_timeout_ms": 30_000,
    "default_api_timeout_ms": 60_000,
    "retry_backoff_ms": 100,
    "retry_backoff_max_ms": 1_000,
    "connect_timeout_ms": 10_000,
    "metadata_max_age_ms": 300_000,
    "client_id": "spate-consumer",
    "group_id": None,
    "group_instance_id": None,
    "enable_auto_commit": True,
    "auto_commit_interval_ms": 5_000,
    "session_timeout_ms": 45_000,
    "heartbeat_interval_ms": 3_000,
    "max_poll_interval_ms": 300_000,
    "partition_assignment_strategy": ("range", "roundrobin"),
}
DEPENDENCIES = {"clock": time.monotonic, "rng": random.Random(1), "socket_factory": socket.create_connection}

# One bad value each, and the message it has always raised.
BAD_VALUES = [
    ({"fetch_min_bytes": -1}, ValueError, "fetch_min_bytes and fetch_max_wait_ms must not be negative"),
    ({"fetch_max_wait_ms": -1}, ValueError, "fetch_min_bytes and fetch_max_wait_ms must not be negative"),
    ({"fetch_max_bytes": 0}, ValueError, "max_partition_fetch_bytes and fetch_max_bytes must be positive"),
    ({"max_partition_fetch_bytes": 0}, ValueError, "max_partition_fetch_bytes and fetch_max_bytes must be positive"),
    ({"isolation_level": "dirty"}, ValueError,
     "isolation_level must be 'read_uncommitted' or 'read_committed', not 'dirty'"),
    ({"request_timeout_ms": 0}, ValueError, "request_timeout_ms must be positive, not 0"),
    ({"retry_backoff_ms": -1}, ValueError, "need 0 <= retry_backoff_ms <= retry_backoff_max_ms"),
    ({"auto_offset_reset": "smallest"}, ValueError,
     "auto_offset_reset must be 'earliest', 'latest' or 'none', not 'smallest'"),
    ({"group_id": ""}, ValueError, "group_id must not be empty"),
    ({"group_id": "g", "heartbeat_interval_ms": 50_000}, ValueError,
     "heartbeat_interval_ms must be positive and below session_timeout_ms"),
    ({"group_id": "g", "heartbeat_interval_ms": 0}, ValueError,
     "heartbeat_interval_ms must be positive and below session_timeout_ms"),
    ({"group_id": "g", "auto_commit_interval_ms": 0}, ValueError,
     "max_poll_interval_ms and auto_commit_interval_ms must be positive"),
    ({"group_id": "g", "max_poll_interval_ms": 0}, ValueError,
     "max_poll_interval_ms and auto_commit_interval_ms must be positive"),
    ({"group_id": "g", "partition_assignment_strategy": "sticky"}, ValueError,
     "unknown partition assignment strategy 'sticky': use one of ['range', 'roundrobin']"),
    ({"group_id": "g", "partition_assignment_strategy": ["range", "range"]}, ValueError,
     "partition_assignment_strategy must name distinct assignors, not ['range', 'range']"),
    ({"group_id": "g", "partition_assignment_strategy": [42]}, TypeError,
     "a partition assignor needs a name and an assign method, not 42"),
    ({"groupid": "g"}, TypeError, "Consumer.__init__() got an unexpected keyword argument 'groupid'"),
]


def test_every_keyword_is_accepted_with_its_default() -> None:
    Consumer(NOWHERE, **SETTINGS, **DEPENDENCIES).close()
    Consumer(NOWHERE, **{**SETTINGS, "group_id": "g"}, **DEPENDENCIES).close()


@pytest.mark.parametrize(("settings", "error", "message"), BAD_VALUES, ids=lambda v: str(v)[:60])
def test_a_bad_value_gets_the_same_error_as_ever(settings, error, message) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        Consumer(NOWHERE, **settings)


def test_group_settings_are_checked_only_for_a_consumer_with_a_group() -> None:
    Consumer(NOWHERE, heartbeat_interval_ms=50_000, partition_assignment_strategy="sticky").close()


def test_the_config_has_the_constructors_defaults_and_parses_values() -> None:
    config = ConsumerConfig()
    assert {name: getattr(config, name) for name in SETTINGS} == {
        **SETTINGS,
        "isolation_level": IsolationLevel.READ_UNCOMMITTED,
        "auto_offset_reset": OffsetResetStrategy.LATEST,
    }
    assert config.assignors == ()
    grouped = ConsumerConfig(group_id="g", isolation_level="read_committed", auto_offset_reset="earliest",
                             partition_assignment_strategy=RangeAssignor(), default_api_timeout_ms=2_500)
    assert (grouped.isolation, grouped.reset_strategy) == (IsolationLevel.READ_COMMITTED, OffsetResetStrategy.EARLIEST)
    assert [a.name for a in grouped.assignors] == ["range"] and grouped.default_api_timeout == 2.5
