"""Kafka's client security properties mapped onto the client's settings, with errors naming the property."""

from __future__ import annotations

from pathlib import Path

import pytest

from spate.client.security_properties import (
    SecurityPropertyError,
    parse_jaas_config,
    read_properties,
    security_settings,
)

SCRAM_JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="s3 \\"x\\"";'
PLAIN_JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required username=alice password='ignored'"


def test_a_scram_jaas_entry_gives_username_and_password(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("pem")
    settings = security_settings({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                                  "sasl.jaas.config": SCRAM_JAAS, "ssl.truststore.location": str(ca),
                                  "ssl.truststore.type": "PEM", "ssl.endpoint.identification.algorithm": "",
                                  "client.id": "left alone"})
    assert settings == {"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
                        "sasl_username": "admin", "sasl_password": 's3 "x"', "ssl_truststore_location": str(ca),
                        "ssl_endpoint_identification_algorithm": ""}


def test_jaas_options_may_be_bare_words() -> None:
    assert parse_jaas_config(PLAIN_JAAS.replace("'ignored'", "pw")) == (
        "org.apache.kafka.common.security.plain.PlainLoginModule", {"username": "alice", "password": "pw"})


@pytest.mark.parametrize("properties, named, text", [
    ({"ssl.truststore.type": "JKS"}, "ssl.truststore.type", "only PEM"),
    ({"sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;"}, "sasl.jaas.config",
     "not supported"),
    ({"sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": PLAIN_JAAS.replace("'ignored'", "x")},
     "sasl.jaas.config", "does not go with"),
    ({"sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required username=a;"},
     "sasl.jaas.config", "has no password"),
    ({"security.protocol": "SASL_TLS"}, "security.protocol", "must be one of"),
    ({"sasl.mechanism": "GSSAPI"}, "sasl.mechanism", "must be one of"),
    ({"ssl.endpoint.identification.algorithm": "ldap"}, "ssl.endpoint.identification.algorithm", "https or empty"),
    ({"ssl.truststore.location": "/no/such/ca.pem"}, "ssl.truststore.location", "no such file"),
    ({"sasl.kerberos.service.name": "kafka"}, "sasl.kerberos.service.name", "not a security setting"),
])
def test_unsupported_values_are_refused_naming_the_property(properties: dict, named: str, text: str) -> None:
    with pytest.raises(SecurityPropertyError, match=text) as refused:
        security_settings(properties)
    assert refused.value.property == named


def test_a_properties_file_with_comments_separators_and_continuations() -> None:
    text = "# client\n! also a comment\nsecurity.protocol=SASL_SSL\nsasl.mechanism : SCRAM-SHA-512\n" \
           "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n" \
           "    username=\"admin\" password=\"pw\";\nssl.endpoint.identification.algorithm=\n"
    assert read_properties(text) == {
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" '
                            'password="pw";',
        "ssl.endpoint.identification.algorithm": ""}
