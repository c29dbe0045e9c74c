"""A config's effective value and its synonyms, each with where it came from (DescribeConfigs' ``ConfigSource``)."""

from __future__ import annotations

from typing import NamedTuple

from spate.protocol.messages.describe_configs import ConfigSource


class EffectiveValue(NamedTuple):
    """A config's value as text (``None`` when unset) and its source."""

    value: str | None
    source: ConfigSource


class ConfigSynonym(NamedTuple):
    """One entry of a DescribeConfigs synonym list, highest precedence first."""

    name: str
    value: str | None
    source: ConfigSource
