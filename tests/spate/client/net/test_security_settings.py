"""The client's security settings: Kafka's names, checked when the client is made."""

from __future__ import annotations

import pytest

from spate.client.config import ClientConfig
from spate.client.net.security import ClientSecurity


def test_plaintext_is_the_default_and_needs_nothing() -> None:
    assert ClientSecurity.from_config(ClientConfig()) is None


def test_an_unknown_security_protocol_is_refused() -> None:
    with pytest.raises(ValueError, match="security_protocol"):
        ClientConfig(security_protocol="TLS")


def test_sasl_needs_a_known_mechanism_and_credentials() -> None:
    with pytest.raises(ValueError, match="sasl_username and sasl_password"):
        ClientConfig(security_protocol="SASL_PLAINTEXT")
    with pytest.raises(ValueError, match="sasl_mechanism"):
        ClientConfig(security_protocol="SASL_PLAINTEXT", sasl_mechanism="GSSAPI", sasl_username="a",
                     sasl_password="b")


def test_sasl_settings_reach_the_connection_and_the_password_stays_out_of_reprs() -> None:
    config = ClientConfig(security_protocol="sasl_plaintext", sasl_mechanism="scram-sha-512", sasl_username="a",
                          sasl_password="hunter2")
    security = ClientSecurity.from_config(config)
    assert security.sasl_mechanism == "SCRAM-SHA-512" and security.ssl_context is None
    assert "hunter2" not in repr(config) and "hunter2" not in repr(security)


def test_ssl_checks_host_names_unless_told_not_to() -> None:
    assert ClientSecurity.from_config(ClientConfig(security_protocol="SSL")).ssl_context.check_hostname
    unchecked = ClientConfig(security_protocol="SSL", ssl_endpoint_identification_algorithm="")
    assert not ClientSecurity.from_config(unchecked).ssl_context.check_hostname
