"""Security properties: per-listener overrides, JAAS lookup, and TLS settings that cannot be used."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.errors import ConfigError
from broker_core.config.security_properties import jaas_config, listener_value
from broker_core.security.tls import client_context, server_context
from spate.cli.certs import create_certificates


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory):
    return create_certificates(tmp_path_factory.mktemp("certs"))


def test_a_listener_override_wins_over_the_broker_wide_value() -> None:
    loaded = BrokerConfig.from_properties({
        "listeners": "INTERNAL://127.0.0.1:9092,EXTERNAL://127.0.0.1:9093",
        "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:SSL",
        "inter.broker.listener.name": "INTERNAL",
        "ssl.client.auth": "none",
        "listener.name.external.ssl.client.auth": "required",
    })
    assert listener_value(loaded.values, "EXTERNAL", "ssl.client.auth") == "required"
    assert listener_value(loaded.values, "INTERNAL", "ssl.client.auth") == "none"


def test_a_listener_override_is_validated_as_its_property() -> None:
    with pytest.raises(ConfigError, match="one of none, requested, required") as raised:
        BrokerConfig.from_properties({"listener.name.external.ssl.client.auth": "sometimes"})
    assert raised.value.key == "listener.name.external.ssl.client.auth"


def test_an_unknown_listener_override_is_refused() -> None:
    with pytest.raises(ConfigError, match="unknown broker property"):
        BrokerConfig.from_properties({"listener.name.external.ssl.flavour": "mint"})


def test_jaas_entries_are_per_listener_and_mechanism() -> None:
    loaded = BrokerConfig.from_properties({
        "listener.name.sasl_ssl.plain.sasl.jaas.config": "plain-entry",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": "scram-entry",
    })
    assert jaas_config(loaded.values, "SASL_SSL", "PLAIN") == "plain-entry"
    assert jaas_config(loaded.values, "SASL_SSL", "SCRAM-SHA-512") == "scram-entry"
    assert jaas_config(loaded.values, "OTHER", "PLAIN") is None


def test_a_missing_key_store_file_names_the_setting(tmp_path: Path) -> None:
    loaded = BrokerConfig.from_properties({"ssl.keystore.location": str(tmp_path / "missing.pem")})
    with pytest.raises(ConfigError, match="does not exist") as raised:
        server_context(loaded.values, "SSL")
    assert raised.value.key == "ssl.keystore.location"


def test_client_authentication_needs_a_trust_store(certs) -> None:
    loaded = BrokerConfig.from_properties({"ssl.keystore.location": str(certs.broker_keystore),
                                           "listener.name.mtls.ssl.client.auth": "required"})
    with pytest.raises(ConfigError, match="needs a trust store") as raised:
        server_context(loaded.values, "MTLS")
    assert raised.value.key == "ssl.truststore.location"


def test_inline_pem_key_store_and_trust_store(certs) -> None:
    loaded = BrokerConfig.from_properties({
        "ssl.keystore.key": certs.part("broker-key.pem").read_text(),
        "ssl.keystore.certificate.chain": certs.part("broker-cert.pem").read_text(),
        "ssl.truststore.certificates": certs.ca.read_text(),
        "ssl.client.auth": "requested",
    })
    assert server_context(loaded.values, "SSL") is not None
    assert client_context(loaded.values, "SSL").check_hostname


def test_an_encrypted_key_needs_its_password(tmp_path: Path) -> None:
    files = create_certificates(tmp_path, key_password="key-secret")
    wrong = BrokerConfig.from_properties({"ssl.keystore.location": str(files.broker_keystore),
                                          "ssl.key.password": "nope"})
    with pytest.raises(ConfigError, match="ssl.key.password"):
        server_context(wrong.values, "SSL")
    right = BrokerConfig.from_properties({"ssl.keystore.location": str(files.broker_keystore),
                                          "ssl.key.password": "key-secret"})
    assert server_context(right.values, "SSL") is not None


def test_only_tls_1_2_and_1_3_can_be_enabled() -> None:
    with pytest.raises(ConfigError, match="TLSv1.1"):
        BrokerConfig.from_properties({"ssl.enabled.protocols": "TLSv1.1"})
