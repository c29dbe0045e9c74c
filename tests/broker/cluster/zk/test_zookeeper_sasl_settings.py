"""The broker's login to ZooKeeper: Kafka's JAAS settings, resolved as Kafka's JaasUtils does, with clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.cluster.zk.client import ZkClientConfig
from broker_core.cluster.zk.zk_sasl import ZkSaslLogin, zk_sasl_login
from broker_core.config import BrokerConfig, ConfigError
from tests.support.zookeeper import write_client_jaas


def config(**props: str) -> BrokerConfig:
    return BrokerConfig.from_properties({"zookeeper.connect": "zk:2181", **props})


def jaas(path: Path, **props: str) -> BrokerConfig:
    return config(**{"java.security.auth.login.config": str(path)}, **props)


def test_without_a_jaas_file_the_broker_connects_unauthenticated_with_open_acls() -> None:
    settings = ZkClientConfig.from_broker_config(config())
    assert settings.sasl is None and settings.set_acl is False


def test_the_client_section_of_the_jaas_file_is_the_login(tmp_path: Path) -> None:
    path = write_client_jaas(tmp_path / "jaas.conf", "kafka", "kafka-secret")
    settings = ZkClientConfig.from_broker_config(jaas(path, **{"zookeeper.set.acl": "true"}))
    assert settings.sasl == ZkSaslLogin("kafka", "kafka-secret", path, "Client")
    assert settings.set_acl is True
    assert settings.sasl.kazoo_sasl_options() == {"mechanism": "DIGEST-MD5", "username": "kafka",
                                                  "password": "kafka-secret"}


def test_zookeeper_sasl_clientconfig_names_another_section(tmp_path: Path) -> None:
    path = write_client_jaas(tmp_path / "jaas.conf", "zkuser", "pw", section="ZkLogin")
    assert zk_sasl_login(jaas(path)) is None  # no "Client" section: no SASL, as in Kafka
    login = zk_sasl_login(jaas(path, **{"zookeeper.sasl.clientconfig": "ZkLogin"}))
    assert (login.username, login.section) == ("zkuser", "ZkLogin")


def test_the_password_never_shows_in_the_login_repr(tmp_path: Path) -> None:
    login = zk_sasl_login(jaas(write_client_jaas(tmp_path / "jaas.conf", "kafka", "kafka-secret")))
    assert "kafka-secret" not in repr(login) and "kafka-secret" not in login.describe


def test_a_missing_jaas_file_is_an_error_naming_the_setting_and_the_file(tmp_path: Path) -> None:
    absent = tmp_path / "absent.conf"
    with pytest.raises(ConfigError) as info:
        ZkClientConfig.from_broker_config(jaas(absent))
    assert str(info.value) == f"java.security.auth.login.config={absent}: JAAS file {absent} does not exist"


def test_set_acl_without_a_login_is_refused_naming_both_settings(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^zookeeper.set.acl: is true, .*java.security.auth.login.config is not set"):
        ZkClientConfig.from_broker_config(config(**{"zookeeper.set.acl": "true"}))
    path = write_client_jaas(tmp_path / "jaas.conf", "kafka", "pw", section="KafkaServer")
    with pytest.raises(ConfigError, match=f"JAAS file {path} has no Client section"):
        ZkClientConfig.from_broker_config(jaas(path, **{"zookeeper.set.acl": "true"}))


def test_a_client_section_with_sasl_turned_off_is_a_contradiction(tmp_path: Path) -> None:
    path = write_client_jaas(tmp_path / "jaas.conf", "kafka", "pw")
    with pytest.raises(ConfigError, match=r"^zookeeper.sasl.client: is false"):
        zk_sasl_login(jaas(path, **{"zookeeper.sasl.client": "false"}))


@pytest.mark.parametrize(
    "section, reason",
    [
        ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;',
         "uses com.sun.security.auth.module.Krb5LoginModule; the ZooKeeper login supports"),
        ('org.apache.zookeeper.server.auth.DigestLoginModule required username="kafka";', "has no password"),
        ('org.apache.zookeeper.server.auth.DigestLoginModule required username="kafka" password="pw"',
         "must be key=value, ending ';'"),
    ],
)
def test_unusable_client_sections_are_errors_naming_the_file(tmp_path: Path, section: str, reason: str) -> None:
    path = tmp_path / "jaas.conf"
    path.write_text(f"Client {{ {section} }};")
    with pytest.raises(ConfigError) as info:
        zk_sasl_login(jaas(path))
    assert str(info.value).startswith(f"java.security.auth.login.config={path}: ")
    assert reason in str(info.value)
