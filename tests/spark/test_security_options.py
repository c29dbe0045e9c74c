"""Spark's Kafka security options (kafka.security.protocol, kafka.sasl.*, kafka.ssl.*) reach every client
of a read or write, admin included; unsupported values are refused naming the option."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_ext.options import SourceOptionError, parse_source_options
from spark_ext.sink_options import SinkOptionError, parse_sink_options

JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="app" password="pw";'


@pytest.fixture
def ca(tmp_path: Path) -> str:
    path = tmp_path / "ca.pem"
    path.write_text("pem")
    return str(path)


def secured(ca: str) -> dict[str, str]:
    return {"kafka.bootstrap.servers": "h:9093", "kafka.security.protocol": "SASL_SSL",
            "kafka.sasl.mechanism": "SCRAM-SHA-512", "kafka.sasl.jaas.config": JAAS,
            "kafka.ssl.truststore.location": ca, "kafka.ssl.endpoint.identification.algorithm": ""}


def expected(ca: str) -> dict[str, str]:
    return {"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512", "sasl_username": "app",
            "sasl_password": "pw", "ssl_truststore_location": ca, "ssl_endpoint_identification_algorithm": ""}


def test_the_source_passes_security_to_its_consumers_and_admin(ca: str) -> None:
    options = parse_source_options({"subscribe": "t", **secured(ca)}, streaming=False)
    assert options.consumer_settings == expected(ca)
    assert options.admin_settings() == expected(ca)


def test_the_sink_passes_security_to_its_producers_and_admin(ca: str) -> None:
    options = parse_sink_options({"topic": "t", **secured(ca)}, streaming=False)
    assert options.producer_settings == expected(ca)
    assert options.admin_settings() == expected(ca)


def test_username_and_password_options_stand_in_for_a_jaas_entry(ca: str) -> None:
    opts = {**secured(ca), "kafka.sasl.username": "u", "kafka.sasl.password": "p", "kafka.sasl.mechanism": "PLAIN",
            "kafka.ssl.keystore.location": ca, "kafka.ssl.key.password": "kp"}
    del opts["kafka.sasl.jaas.config"]
    settings = parse_source_options({"subscribe": "t", **opts}, streaming=False).consumer_settings
    assert (settings["sasl_username"], settings["sasl_password"], settings["sasl_mechanism"]) == ("u", "p", "PLAIN")
    assert (settings["ssl_keystore_location"], settings["ssl_key_password"]) == (ca, "kp")


@pytest.mark.parametrize("change, option, text", [
    ({"kafka.ssl.truststore.type": "JKS"}, "kafka.ssl.truststore.type", "only PEM"),
    ({"kafka.sasl.mechanism": "GSSAPI"}, "kafka.sasl.mechanism", "must be one of"),
    ({"kafka.sasl.jaas.config": "x.KerberosLoginModule required;"}, "kafka.sasl.jaas.config", "not supported"),
    ({"kafka.sasl.jaas.config": None}, "kafka.sasl.jaas.config", "is needed with security.protocol=SASL_SSL"),
    ({"kafka.ssl.truststore.location": "/no/ca.pem"}, "kafka.ssl.truststore.location", "no such file"),
    ({"kafka.sasl.kerberos.service.name": "kafka"}, "kafka.sasl.kerberos.service.name", "not a security setting"),
])
def test_unsupported_values_are_refused_naming_the_option(ca: str, change: dict, option: str, text: str) -> None:
    opts = {k: v for k, v in {**secured(ca), **change}.items() if v is not None}
    for parse, error in ((parse_source_options, SourceOptionError), (parse_sink_options, SinkOptionError)):
        target = {"subscribe": "t"} if error is SourceOptionError else {"topic": "t"}
        with pytest.raises(error, match=text) as refused:
            parse({**target, **opts}, streaming=False)
        assert refused.value.option == option
