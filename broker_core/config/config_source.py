"""Where a config value came from, with DescribeConfigs' numbering."""

from __future__ import annotations

import enum
from typing import NamedTuple


class ConfigSource(enum.IntEnum):
    """Kafka's ``ConfigSource`` ids as DescribeConfigs v1+ reports them."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6


class EffectiveValue(NamedTuple):
    """A config's value as text (``None`` when unset) and its source."""

    value: str | None
    source: ConfigSource


class ConfigSynonym(NamedTuple):
    """One entry of a DescribeConfigs synonym list, highest precedence first."""

    name: str
    value: str | None
    source: ConfigSource
