"""Configs Kafka 3.9 accepts but ignores are accepted, ignored and logged, never refused."""

from __future__ import annotations

import logging

import pytest

from broker_core.config.broker_config import BrokerConfig, load_broker_config
from broker_core.config.deprecated_configs import IGNORED_BROKER_PROPERTIES, IGNORED_TOPIC_CONFIGS
from broker_core.config.errors import ConfigError
from broker_core.config.incremental_configs import OP_APPEND, OP_SET, ConfigOp, apply_incremental_ops
from broker_core.config.topic_config import validate_topic_configs


@pytest.mark.parametrize("key", list(IGNORED_TOPIC_CONFIGS))
def test_an_ignored_topic_config_is_accepted_and_not_stored(key: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="broker_core.config.deprecated_configs"):
        assert validate_topic_configs({key: "0.10.0.0", "retention.ms": "1000"}) == {"retention.ms": "1000"}
    assert f"topic config {key} is accepted and ignored" in caplog.text


def test_message_format_version_set_incrementally_is_accepted_and_ignored() -> None:
    ops = [ConfigOp("message.format.version", OP_SET, "0.10.0.0"), ConfigOp("retention.ms", OP_SET, "5000")]
    assert apply_incremental_ops(BrokerConfig.from_properties(), {}, ops) == {"retention.ms": "5000"}


def test_an_ignored_topic_config_takes_any_operation_without_complaint() -> None:
    ops = [ConfigOp("message.format.version", OP_APPEND, "0.10.0.0")]
    assert apply_incremental_ops(BrokerConfig.from_properties(), {}, ops) == {}


def test_message_downconversion_enable_is_a_topic_config_that_is_kept() -> None:
    ops = [ConfigOp("message.downconversion.enable", OP_SET, "false")]
    assert apply_incremental_ops(BrokerConfig.from_properties(), {}, ops) == {"message.downconversion.enable": "false"}


def test_an_unknown_topic_config_is_still_refused() -> None:
    with pytest.raises(ConfigError, match="unknown topic config"):
        validate_topic_configs({"message.format.versions": "0.10.0.0"})


@pytest.mark.parametrize("key", list(IGNORED_BROKER_PROPERTIES))
def test_an_ignored_broker_property_is_accepted_with_a_warning(key: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="broker_core.config.deprecated_configs"):
        config = load_broker_config(None, [f"{key}=2.8", "num.partitions=3"])
    assert config.get("num.partitions") == 3
    assert f"broker property {key} is accepted and ignored" in caplog.text


def test_an_unknown_broker_property_is_still_refused() -> None:
    with pytest.raises(ConfigError, match="unknown broker property"):
        load_broker_config(None, ["inter.broker.protocol.versions=3.9"])
