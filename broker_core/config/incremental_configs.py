"""IncrementalAlterConfigs on a topic's overrides: SET, DELETE, APPEND and SUBTRACT, as Kafka applies them.

The operations apply in request order to the topic's current overrides:
SET replaces a key, DELETE removes it (back to the broker's default),
APPEND adds the comma-separated values not already present to a list config
(cleanup.policy), SUBTRACT removes them. APPEND and SUBTRACT start from the
topic's override or, without one, from its effective default. The result is
validated as a whole, like AlterConfigs.

Errors: a key named twice, an unknown operation, a null value for SET,
APPEND or SUBTRACT, or APPEND / SUBTRACT on a config that is not a list:
INVALID_REQUEST; an unknown key or a bad value: INVALID_CONFIG.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.definitions import PropertyType, render_value
from broker_core.config.deprecated_configs import is_ignored_topic_config
from broker_core.config.errors import ConfigError
from broker_core.config.topic_config import TOPIC_CONFIGS, effective_topic_values, validate_topic_configs
from spate.protocol.errors import ErrorCode, KafkaError

OP_SET = 0
OP_DELETE = 1
OP_APPEND = 2
OP_SUBTRACT = 3
OPERATION_NAMES = {OP_SET: "SET", OP_DELETE: "DELETE", OP_APPEND: "APPEND", OP_SUBTRACT: "SUBTRACT"}


@dataclass(frozen=True)
class ConfigOp:
    name: str
    operation: int
    value: str | None = None


def apply_incremental_ops(
    broker_config: BrokerConfig, current: Mapping[str, str], ops: Sequence[ConfigOp]
) -> dict[str, str]:
    """The topic's new overrides (validated, canonical text) after ``ops``; raises as the module says."""
    check_ops(ops)
    overrides: dict[str, str] = dict(current)
    for op in ops:
        if op.operation == OP_DELETE:
            overrides.pop(op.name, None)
            continue
        if is_ignored_topic_config(op.name):
            continue
        if op.value is None:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"{OPERATION_NAMES[op.operation]} of {op.name} has a null value")
        if op.operation == OP_SET:
            overrides[op.name] = op.value
            continue
        old = _list_value(broker_config, overrides, op)
        values = split_list(op.value)
        if op.operation == OP_APPEND:
            new = old + [v for v in values if v not in old]
        else:
            new = [v for v in old if v not in values]
        overrides[op.name] = ",".join(new)
    return validate_topic_configs(overrides)


def check_ops(ops: Sequence[ConfigOp]) -> None:
    seen: set[str] = set()
    for op in ops:
        if op.operation not in OPERATION_NAMES:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"unknown config operation {op.operation} for {op.name}")
        if op.name in seen:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"config {op.name} is named more than once")
        seen.add(op.name)


def _list_value(broker_config: BrokerConfig, overrides: Mapping[str, str], op: ConfigOp) -> list[str]:
    entry = TOPIC_CONFIGS.get(op.name)
    if entry is None:
        raise ConfigError("unknown topic config", key=op.name, value=op.value)
    if entry.definition.type is not PropertyType.LIST:
        raise KafkaError(
            ErrorCode.INVALID_REQUEST, f"{OPERATION_NAMES[op.operation]} is only allowed on list configs, not {op.name}"
        )
    if op.name in overrides:
        return split_list(overrides[op.name])
    return split_list(render_value(effective_topic_values(broker_config, {})[op.name]) or "")


def split_list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]
