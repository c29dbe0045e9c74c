"""Configs Kafka 3.9 still accepts although they no longer change anything: accepted, ignored, logged.

Scripts and clients written for older Kafka versions still set them (librdkafka's
test suite sets ``message.format.version`` through AlterConfigs, old broker
property files carry ``inter.broker.protocol.version``). Kafka 3.x accepts and
ignores them; so does Spate, which writes only the v2 record format and has
one inter-broker protocol. Each is logged once per use,
and none is stored or described.
"""

from __future__ import annotations

import logging
from types import MappingProxyType
from typing import Mapping

logger = logging.getLogger(__name__)

IGNORED_TOPIC_CONFIGS: Mapping[str, str] = MappingProxyType(
    {
        "message.format.version": "deprecated since Kafka 3.0; records are always written in format v2",
    }
)

IGNORED_BROKER_PROPERTIES: Mapping[str, str] = MappingProxyType(
    {
        "log.message.format.version": "deprecated since Kafka 3.0; records are always written in format v2",
        "inter.broker.protocol.version": "brokers speak the newest inter-broker protocol they share",
        "offsets.commit.required.acks": "deprecated since Kafka 3.x; offset commits wait for the in-sync replicas",
    }
)


def is_ignored_topic_config(key: str) -> bool:
    """True (and a log line) for a topic config that is accepted and ignored."""
    reason = IGNORED_TOPIC_CONFIGS.get(key)
    if reason is not None:
        logger.info("topic config %s is accepted and ignored: %s", key, reason)
    return reason is not None


def is_ignored_broker_property(key: str) -> bool:
    """True (and a log line) for a broker property that is accepted and ignored."""
    reason = IGNORED_BROKER_PROPERTIES.get(key)
    if reason is not None:
        logger.warning("broker property %s is accepted and ignored: %s", key, reason)
    return reason is not None
