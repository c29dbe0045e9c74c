"""The shipped files under conf/ load and say what they promise."""

from __future__ import annotations

from pathlib import Path

from broker_core.config import load_broker_config
from broker_core.config.properties_file import read_properties_file

CONF = Path(__file__).resolve().parents[3] / "conf"


def test_default_broker_properties_load_as_a_single_embedded_broker() -> None:
    config = load_broker_config(CONF / "broker.properties")
    assert config.node_id == 0
    assert config.zookeeper_connect is None
    assert [str(listener) for listener in config.listeners] == ["PLAINTEXT://127.0.0.1:9092"]
    assert config.get_int("offsets.topic.replication.factor") == 1
    assert config.log_retention_ms == 168 * 3_600_000


def test_default_broker_properties_accept_overrides() -> None:
    config = load_broker_config(CONF / "broker.properties", ["listeners=PLAINTEXT://127.0.0.1:0", "log.dirs=/srv/spate"])
    assert config.listeners[0].port == 0
    assert config.log_dirs == (Path("/srv/spate"),)


def test_log4j2_config_is_quiet_and_writes_to_stderr() -> None:
    settings = {entry.key: entry.value for entry in read_properties_file(CONF / "log4j2.properties")}
    assert settings["rootLogger.level"].lower() == "warn"
    appender = settings["rootLogger.appenderRef.console.ref"]
    assert settings["appender.console.name"] == appender
    assert settings["appender.console.type"] == "Console"
    assert settings["appender.console.target"] == "SYSTEM_ERR"
