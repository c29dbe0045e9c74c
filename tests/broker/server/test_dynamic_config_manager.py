"""AlterConfigs on resource BROKER: which broker it names, what is stored, what a running broker applies."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.dynamic_broker_config import LOG_CONFIGS
from broker_core.config.errors import ConfigError
from broker_core.config.incremental_configs import OP_APPEND, OP_SET, ConfigOp
from broker_core.server.dynamic_config_manager import DynamicConfigManager
from broker_core.server.dynamic_config_store import CONFIGS_FILE_NAME, FileDynamicConfigStore
from spate.protocol.errors import ErrorCode, KafkaError


def manager_in(directory: Path, **static: str) -> DynamicConfigManager:
    config = BrokerConfig.from_properties({"broker.id": "7", **static})
    return DynamicConfigManager(config, FileDynamicConfigStore(directory))


def run(coroutine):
    return asyncio.run(coroutine)


@pytest.mark.parametrize(("name", "message"), [
    ("8", "Unexpected broker id, expected 7, but received 8"),
    ("seven", "Broker id must be an integer, but it is: seven"),
])
def test_another_broker_is_an_invalid_request(tmp_path: Path, name: str, message: str) -> None:
    manager = manager_in(tmp_path)
    with pytest.raises(KafkaError) as raised:
        run(manager.alter(name, {"log.retention.ms": "1000"}, validate_only=False))
    assert raised.value.code == ErrorCode.INVALID_REQUEST and message in str(raised.value)


def test_alter_stores_the_layer_and_the_broker_runs_with_it(tmp_path: Path) -> None:
    manager = manager_in(tmp_path)
    run(manager.alter("7", {"log.retention.ms": "1000"}, validate_only=False))

    assert manager.current.log_retention_ms == 1000
    stored = json.loads((tmp_path / CONFIGS_FILE_NAME).read_text())
    assert stored["brokers"] == {"7": {"log.retention.ms": "1000"}}


def test_the_dynamic_configs_are_in_force_again_after_a_restart(tmp_path: Path) -> None:
    run(manager_in(tmp_path).alter("", {"log.segment.bytes": "4096"}, validate_only=False))
    run(manager_in(tmp_path).alter("7", {"log.retention.ms": "1000"}, validate_only=False))

    restarted = manager_in(tmp_path)
    assert restarted.current.get_int("log.segment.bytes") == 4096
    assert restarted.current.log_retention_ms == 1000


def test_alter_replaces_the_whole_layer(tmp_path: Path) -> None:
    manager = manager_in(tmp_path)
    run(manager.alter("7", {"log.retention.ms": "1000"}, validate_only=False))
    run(manager.alter("7", {"log.segment.bytes": "4096"}, validate_only=False))

    assert manager.dynamic.per_broker == {"log.segment.bytes": "4096"}


def test_incremental_alter_changes_single_keys(tmp_path: Path) -> None:
    manager = manager_in(tmp_path)
    run(manager.incremental_alter("7", [ConfigOp("log.retention.ms", OP_SET, "1000")], validate_only=False))
    run(manager.incremental_alter("7", [ConfigOp("log.cleanup.policy", OP_APPEND, "compact")], validate_only=False))

    assert manager.dynamic.per_broker == {"log.retention.ms": "1000", "log.cleanup.policy": "delete,compact"}


def test_validate_only_changes_nothing(tmp_path: Path) -> None:
    manager = manager_in(tmp_path)
    run(manager.alter("7", {"log.retention.ms": "1000"}, validate_only=True))
    run(manager.incremental_alter("7", [ConfigOp("log.retention.ms", OP_SET, "5")], validate_only=True))

    assert manager.dynamic.per_broker == {}
    assert not (tmp_path / CONFIGS_FILE_NAME).exists()


def test_a_refused_change_stores_nothing(tmp_path: Path) -> None:
    manager = manager_in(tmp_path)
    with pytest.raises(ConfigError, match="Cannot update these configs dynamically: num.partitions"):
        run(manager.incremental_alter("7", [ConfigOp("log.retention.ms", OP_SET, "1000"),
                                            ConfigOp("num.partitions", OP_SET, "3")], validate_only=False))
    assert manager.dynamic.per_broker == {}


def test_a_change_that_breaks_the_merged_configuration_is_refused(tmp_path: Path) -> None:
    manager = manager_in(tmp_path)
    with pytest.raises(ConfigError, match="retention"):
        run(manager.alter("", {"log.retention.ms": "0"}, validate_only=False))


def test_reconfigurables_follow_the_names_they_registered_for(tmp_path: Path) -> None:
    manager = manager_in(tmp_path)
    seen: list[tuple[int, int]] = []
    manager.add_reconfigurable(LOG_CONFIGS, lambda old, new: seen.append((old.log_retention_ms, new.log_retention_ms)))

    run(manager.alter("7", {"log.retention.ms": "1000"}, validate_only=False))
    run(manager.alter("7", {"log.retention.ms": "1000", "background.threads": "9"}, validate_only=False))

    assert seen == [(7 * 24 * 3600 * 1000, 1000)]


def test_a_notification_applies_what_another_broker_wrote(tmp_path: Path) -> None:
    manager = manager_in(tmp_path)
    other = manager_in(tmp_path)  # stands for the broker that handled the request
    run(other.alter("", {"log.retention.ms": "1000"}, validate_only=False))

    manager.reload_from_thread()

    assert manager.current.log_retention_ms == 1000
