"""IncrementalAlterConfigs operations on a topic's overrides, as Kafka applies them."""

from __future__ import annotations

import pytest

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.errors import ConfigError
from broker_core.config.incremental_configs import (
    OP_APPEND,
    OP_DELETE,
    OP_SET,
    OP_SUBTRACT,
    ConfigOp,
    apply_incremental_ops,
)
from spate.protocol.errors import ErrorCode, KafkaError

DEFAULTS = BrokerConfig.from_properties()


def test_set_and_delete_touch_only_the_named_keys() -> None:
    current = {"retention.ms": "1000", "segment.bytes": "2048"}
    ops = [ConfigOp("retention.ms", OP_SET, "5000"), ConfigOp("segment.bytes", OP_DELETE)]
    assert apply_incremental_ops(DEFAULTS, current, ops) == {"retention.ms": "5000"}


def test_append_starts_from_the_default_and_skips_values_present() -> None:
    ops = [ConfigOp("cleanup.policy", OP_APPEND, "compact,delete")]
    assert apply_incremental_ops(DEFAULTS, {}, ops) == {"cleanup.policy": "delete,compact"}


def test_subtract_removes_values_from_a_list() -> None:
    ops = [ConfigOp("cleanup.policy", OP_SUBTRACT, "delete")]
    assert apply_incremental_ops(DEFAULTS, {"cleanup.policy": "compact,delete"}, ops) == {"cleanup.policy": "compact"}


def test_the_broker_default_of_a_list_is_where_append_starts() -> None:
    compacting = BrokerConfig.from_properties({"log.cleanup.policy": "compact"})
    ops = [ConfigOp("cleanup.policy", OP_APPEND, "delete")]
    assert apply_incremental_ops(compacting, {}, ops) == {"cleanup.policy": "compact,delete"}


@pytest.mark.parametrize(
    "ops, message",
    [
        ([ConfigOp("retention.ms", OP_APPEND, "5")], "only allowed on list configs"),
        ([ConfigOp("retention.ms", 9, "5")], "unknown config operation 9"),
        ([ConfigOp("retention.ms", OP_SET, "5"), ConfigOp("retention.ms", OP_DELETE)], "more than once"),
        ([ConfigOp("retention.ms", OP_SET, None)], "null value"),
    ],
)
def test_malformed_requests_are_invalid_requests(ops, message) -> None:
    with pytest.raises(KafkaError, match=message) as raised:
        apply_incremental_ops(DEFAULTS, {}, ops)
    assert raised.value.code == ErrorCode.INVALID_REQUEST


@pytest.mark.parametrize(
    "ops",
    [
        [ConfigOp("retention.mss", OP_SET, "5")],
        [ConfigOp("retention.ms", OP_SET, "soon")],
        [ConfigOp("no.such.list", OP_APPEND, "x")],
        [ConfigOp("cleanup.policy", OP_SUBTRACT, "delete")],  # would leave the policy empty
    ],
)
def test_unknown_keys_and_bad_values_are_config_errors(ops) -> None:
    with pytest.raises(ConfigError) as raised:
        apply_incremental_ops(DEFAULTS, {}, ops)
    assert raised.value.error_code == ErrorCode.INVALID_CONFIG
