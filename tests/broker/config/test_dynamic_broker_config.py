"""Dynamic broker configs: what may be set without a restart, how the layers merge, how DescribeConfigs shows them."""

from __future__ import annotations

import pytest

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.dynamic_broker_config import (
    APPLIED_AT_RUNTIME,
    DYNAMIC_CONFIGS,
    DynamicBrokerConfig,
    apply_broker_ops,
    broker_config_synonyms,
    validate_dynamic_configs,
)
from broker_core.config.errors import ConfigError
from broker_core.config.incremental_configs import OP_APPEND, OP_DELETE, OP_SET, OP_SUBTRACT, ConfigOp
from spate.protocol.errors import ErrorCode, KafkaError
from spate.protocol.messages.describe_configs import ConfigSource


def refusal(props: dict[str, str], *, per_broker: bool = True) -> str:
    with pytest.raises(ConfigError) as raised:
        validate_dynamic_configs(props, per_broker=per_broker)
    assert raised.value.error_code == ErrorCode.INVALID_CONFIG
    return str(raised.value)


# --- what may be set -------------------------------------------------------------------------


def test_kafkas_dynamic_log_configs_are_accepted() -> None:
    validate_dynamic_configs({"log.retention.ms": "60000", "log.segment.bytes": "1048576",
                              "log.cleanup.policy": "compact", "message.max.bytes": "2000000"}, per_broker=True)


def test_a_static_broker_property_cannot_be_updated_dynamically() -> None:
    assert "Cannot update these configs dynamically: broker.id, log.dirs" in refusal(
        {"log.dirs": "/tmp/x", "broker.id": "3"})


def test_only_the_first_synonym_of_a_log_config_is_dynamic() -> None:
    # As Kafka: log.retention.ms is dynamic, log.retention.hours is not.
    assert "log.retention.ms" in DYNAMIC_CONFIGS
    assert "Cannot update these configs dynamically: log.retention.hours" in refusal({"log.retention.hours": "1"})


def test_message_format_version_is_not_dynamic() -> None:
    assert "log.message.format.version" not in DYNAMIC_CONFIGS


def test_a_name_that_no_broker_knows_is_refused() -> None:
    assert "Unknown broker configs" in refusal({"log.retention.msec": "5"})


def test_kafka_dynamic_configs_spate_does_not_use_are_kept() -> None:
    validate_dynamic_configs({"sasl.kerberos.min.time.before.relogin": "58000"}, per_broker=True)


def test_listener_configs_spate_does_not_use_need_a_broker_id() -> None:
    message = refusal({"sasl.kerberos.service.name": "kafka"}, per_broker=False)
    assert ("Cannot update these configs at default cluster level, broker id must be specified: "
            "sasl.kerberos.service.name") in message
    validate_dynamic_configs({"sasl.kerberos.service.name": "kafka"}, per_broker=True)
    validate_dynamic_configs({"max.connections": "100"}, per_broker=False)  # a cluster-level listener config


@pytest.mark.parametrize("name", ["advertised.listeners", "sasl.enabled.mechanisms", "ssl.keystore.location",
                                  "listener.name.external.ssl.keystore.location"])
def test_listeners_and_their_security_stay_static(name: str) -> None:
    assert "does not change its listeners or their TLS and SASL settings" in refusal({name: "x"})


def test_a_value_of_the_wrong_type_is_refused_naming_the_config() -> None:
    message = refusal({"log.retention.ms": "soon"})
    assert "log.retention.ms" in message and "soon" in message


def test_log_defaults_and_connection_limits_apply_at_runtime() -> None:
    assert {"log.retention.ms", "log.segment.bytes", "message.max.bytes", "max.connections"} <= APPLIED_AT_RUNTIME
    assert "num.io.threads" not in APPLIED_AT_RUNTIME
    assert "log.cleaner.threads" not in APPLIED_AT_RUNTIME


# --- layers ------------------------------------------------------------------------------------


@pytest.fixture
def layered() -> DynamicBrokerConfig:
    static = BrokerConfig.from_properties({"log.retention.hours": "5", "num.partitions": "4"})
    return DynamicBrokerConfig(static, defaults={"log.retention.ms": "1000", "log.segment.bytes": "4096"},
                               per_broker={"log.retention.ms": "2000"})


def test_the_broker_runs_with_its_own_dynamic_configs_over_the_defaults_over_the_file(layered) -> None:
    assert layered.current.log_retention_ms == 2000
    assert layered.current.get_int("log.segment.bytes") == 4096
    assert layered.current.get_int("num.partitions") == 4


def test_describe_reports_the_source_and_every_synonym_by_precedence(layered) -> None:
    value, synonyms = layered.describe(per_broker=True)["log.retention.ms"]

    assert value.value == "2000" and value.source == ConfigSource.DYNAMIC_BROKER_CONFIG
    assert [(s.name, s.value, s.source) for s in synonyms] == [
        ("log.retention.ms", "2000", ConfigSource.DYNAMIC_BROKER_CONFIG),
        ("log.retention.ms", "1000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("log.retention.hours", "5", ConfigSource.STATIC_BROKER_CONFIG),
        ("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG),
    ]


def test_describing_a_lower_synonym_skips_the_higher_ones(layered) -> None:
    _, synonyms = layered.describe(per_broker=True)["log.retention.hours"]
    assert [(s.name, s.source) for s in synonyms] == [
        ("log.retention.hours", ConfigSource.STATIC_BROKER_CONFIG),
        ("log.retention.hours", ConfigSource.DEFAULT_CONFIG),
    ]


def test_static_and_default_sources(layered) -> None:
    described = layered.describe(per_broker=True)
    assert described["num.partitions"][0].source == ConfigSource.STATIC_BROKER_CONFIG
    assert described["num.io.threads"][0].source == ConfigSource.DEFAULT_CONFIG


def test_the_cluster_default_resource_lists_only_the_dynamic_defaults(layered) -> None:
    described = layered.describe(per_broker=False)
    assert sorted(described) == ["log.retention.ms", "log.segment.bytes"]
    value, synonyms = described["log.retention.ms"]
    assert (value.value, value.source) == ("1000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert {s.source for s in synonyms} == {ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG}


def test_retention_and_roll_synonyms_are_kafkas() -> None:
    assert broker_config_synonyms("log.retention.minutes") == (
        "log.retention.ms", "log.retention.minutes", "log.retention.hours")
    assert broker_config_synonyms("log.roll.ms") == ("log.roll.ms", "log.roll.hours")
    assert broker_config_synonyms("listener.name.external.max.connections") == (
        "listener.name.external.max.connections", "max.connections")


# --- IncrementalAlterConfigs on a layer ----------------------------------------------------------


def test_append_starts_from_the_default_of_a_list_config() -> None:
    assert apply_broker_ops({}, [ConfigOp("log.cleanup.policy", OP_APPEND, "compact")]) == {
        "log.cleanup.policy": "delete,compact"}


def test_subtract_and_delete() -> None:
    current = {"log.cleanup.policy": "delete,compact", "background.threads": "9"}
    ops = [ConfigOp("log.cleanup.policy", OP_SUBTRACT, "compact"), ConfigOp("background.threads", OP_DELETE)]
    assert apply_broker_ops(current, ops) == {"log.cleanup.policy": "delete"}


def test_set_replaces_one_key_and_keeps_the_others() -> None:
    assert apply_broker_ops({"log.retention.ms": "1"}, [ConfigOp("log.segment.bytes", OP_SET, "4096")]) == {
        "log.retention.ms": "1", "log.segment.bytes": "4096"}


def test_append_to_a_config_that_is_not_a_list_is_an_invalid_request() -> None:
    with pytest.raises(KafkaError) as raised:
        apply_broker_ops({}, [ConfigOp("log.retention.ms", OP_APPEND, "5")])
    assert raised.value.code == ErrorCode.INVALID_REQUEST
    assert "Config value append is not allowed for config key: log.retention.ms" in str(raised.value)


def test_the_layer_a_broker_property_comes_from(layered) -> None:
    assert layered.layer_source("log.retention.ms") == ConfigSource.DYNAMIC_BROKER_CONFIG
    assert layered.layer_source("log.segment.bytes") == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    assert layered.layer_source("num.partitions") == ConfigSource.STATIC_BROKER_CONFIG
