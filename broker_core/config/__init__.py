"""Broker and topic configuration under Kafka's property names.

Public API::

    load_broker_config(path, overrides) -> BrokerConfig
    BrokerConfig.from_properties({...}) -> BrokerConfig
    validate_topic_configs(configs) -> dict[str, str]
    effective_topic_config(broker_config, topic_overrides) -> dict[str, EffectiveValue]
    to_log_config_kwargs(broker_config, topic_overrides) -> dict[str, object]
"""

from broker_core.config.broker_config import BrokerConfig, load_broker_config
from broker_core.config.broker_properties import BROKER_PROPERTIES
from broker_core.config.config_source import ConfigSynonym, EffectiveValue
from broker_core.config.definitions import ConfigValue, PropertyDef, PropertyType
from broker_core.config.errors import ConfigError
from broker_core.config.listeners import Listener
from broker_core.config.topic_config import (
    LOG_CONFIG_FIELDS,
    TOPIC_CONFIGS,
    TopicConfigDef,
    effective_topic_config,
    effective_topic_values,
    to_log_config_kwargs,
    topic_config_synonyms,
    validate_topic_configs,
)
from spate.protocol.messages.describe_configs import ConfigSource

__all__ = [
    "BROKER_PROPERTIES",
    "LOG_CONFIG_FIELDS",
    "TOPIC_CONFIGS",
    "BrokerConfig",
    "ConfigError",
    "ConfigSource",
    "ConfigSynonym",
    "ConfigValue",
    "EffectiveValue",
    "Listener",
    "PropertyDef",
    "PropertyType",
    "TopicConfigDef",
    "effective_topic_config",
    "effective_topic_values",
    "load_broker_config",
    "to_log_config_kwargs",
    "topic_config_synonyms",
    "validate_topic_configs",
]
