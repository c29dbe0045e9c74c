"""How a broker connects to other brokers: the inter-broker listener's protocol and its own credentials."""

from __future__ import annotations

import pytest

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.errors import ConfigError
from broker_core.security.inter_broker import PLAINTEXT, InterBrokerSecurity
from spate.cli.certs import create_certificates

LISTENERS = {"listeners": "CLIENT://127.0.0.1:9092,INTERNAL://127.0.0.1:9093",
             "listener.security.protocol.map": "CLIENT:PLAINTEXT,INTERNAL:SASL_SSL",
             "inter.broker.listener.name": "INTERNAL"}


def test_a_plaintext_inter_broker_listener_connects_plainly() -> None:
    assert InterBrokerSecurity.from_config(BrokerConfig.from_properties({})) == PLAINTEXT


def test_sasl_ssl_uses_the_mechanism_and_the_credentials_of_the_listeners_jaas_entry(tmp_path) -> None:
    certs = create_certificates(tmp_path)
    config = BrokerConfig.from_properties({
        **LISTENERS, "ssl.truststore.location": str(certs.ca), "ssl.keystore.location": str(certs.broker_keystore),
        "sasl.mechanism.inter.broker.protocol": "SCRAM-SHA-256",
        "listener.name.internal.scram-sha-256.sasl.jaas.config":
            'org.apache.kafka.common.security.scram.ScramLoginModule required username="b" password="pw";',
    })
    security = InterBrokerSecurity.from_config(config)
    assert security.mechanism == "SCRAM-SHA-256" and (security.username, security.password) == ("b", "pw")
    assert security.ssl_context is not None and security.ssl_context.check_hostname


def test_a_sasl_inter_broker_listener_without_credentials_names_the_jaas_key() -> None:
    config = BrokerConfig.from_properties({**LISTENERS, "listener.security.protocol.map":
                                           "CLIENT:PLAINTEXT,INTERNAL:SASL_PLAINTEXT"})
    with pytest.raises(ConfigError, match="username and password") as raised:
        InterBrokerSecurity.from_config(config)
    assert raised.value.key == "listener.name.internal.plain.sasl.jaas.config"
