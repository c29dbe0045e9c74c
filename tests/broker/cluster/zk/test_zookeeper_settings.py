"""Kafka's zookeeper.* settings: parsed, validated with one-line errors naming the key, and turned into a client config."""

from __future__ import annotations

import pytest

from broker_core.cluster.zk.client import RetryPolicy, ZkClientConfig
from broker_core.config import BrokerConfig, ConfigError, load_broker_config
from broker_core.config.zookeeper import ZkConnectString, ZkServerAddress


def config(**props: str) -> BrokerConfig:
    return BrokerConfig.from_properties({key.replace("_", "."): value for key, value in props.items()})


@pytest.mark.parametrize(
    "text, servers, chroot",
    [
        ("zk:2181", [("zk", 2181)], None),
        ("zk1:2181,zk2:2182,zk3:2183/kafka", [("zk1", 2181), ("zk2", 2182), ("zk3", 2183)], "/kafka"),
        ("zk", [("zk", 2181)], None),  # ZooKeeper's default port, as its own client reads the string
        ("[::1]:2181/a/b", [("::1", 2181)], "/a/b"),
        ("zk:2181/", [("zk", 2181)], None),  # "/" alone is the root
        (" zk:2181/spate=x ", [("zk", 2181)], "/spate=x"),
    ],
)
def test_connect_strings_parse_into_servers_and_chroot(text: str, servers: list, chroot: str | None) -> None:
    parsed = config(zookeeper_connect=text).zookeeper_connect_string
    assert parsed == ZkConnectString(tuple(ZkServerAddress(h, p) for h, p in servers), chroot)


def test_an_empty_connect_string_means_the_embedded_store() -> None:
    assert config().zookeeper_connect_string is None
    assert config(zookeeper_connect="").zookeeper_connect is None


@pytest.mark.parametrize(
    "text, reason",
    [
        ("zk:99999", "port '99999'"),
        ("zk:abc", "port 'abc'"),
        ("zk1:2181,,zk2:2181", "empty server entry"),
        ("/chroot", "names no ZooKeeper server"),
        ("zk:2181/a/", "must not end with '/'"),
        ("zk:2181/a//b", "empty, '.' or '..' segment"),
        ("zk:2181/a/../b", "empty, '.' or '..' segment"),
        ("zk:1:2", "is not host:port"),
    ],
)
def test_bad_connect_strings_are_one_line_errors_naming_the_key(text: str, reason: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_broker_config(None, [f"zookeeper.connect={text}"])
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"--override: zookeeper.connect={text}: ")
    assert reason in message
    assert "host:port[,host:port...][/chroot]" in message


def test_timeouts_default_as_kafkas() -> None:
    defaults = config()
    assert defaults.zookeeper_session_timeout_ms == 18000
    assert defaults.zookeeper_connection_timeout_ms == 18000
    assert config(zookeeper_session_timeout_ms="6000").zookeeper_connection_timeout_ms == 6000
    assert config(zookeeper_connection_timeout_ms="500").zookeeper_connection_timeout_ms == 500


@pytest.mark.parametrize("key", ["zookeeper.session.timeout.ms", "zookeeper.connection.timeout.ms"])
@pytest.mark.parametrize("value", ["0", "-5", "soon"])
def test_bad_timeouts_are_one_line_errors_naming_the_key(key: str, value: str) -> None:
    with pytest.raises(ConfigError, match=f"^--override: {key}={value}: ") as info:
        load_broker_config(None, [f"{key}={value}"])
    assert "\n" not in str(info.value)


def test_the_client_config_takes_the_brokers_settings() -> None:
    broker = config(
        zookeeper_connect="zk1:2181,zk2:2181/spate", zookeeper_session_timeout_ms="9000",
        zookeeper_connection_timeout_ms="3000",
    )  # fmt: skip
    client = ZkClientConfig.from_broker_config(broker)
    assert client.connect.hosts == "zk1:2181,zk2:2181"
    assert client.connect.chroot == "/spate"
    assert (client.session_timeout_ms, client.effective_connection_timeout_ms) == (9000, 3000)
    # Retries are bounded in count and, by default, by the session timeout.
    assert client.retry_policy == RetryPolicy(deadline_ms=9000)
    assert client.retry_policy.max_attempts >= 1


def test_the_client_config_refuses_an_empty_connect_string() -> None:
    with pytest.raises(ConfigError, match="^zookeeper.connect: is empty"):
        ZkClientConfig.from_broker_config(config())
    with pytest.raises(ConfigError, match="^zookeeper.connect=nope:x: "):
        ZkClientConfig.of("nope:x")
