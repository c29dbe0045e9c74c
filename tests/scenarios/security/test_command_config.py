"""``--command-config FILE``: the CLI's commands connect over SASL_SSL with Kafka's client properties."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scenarios.security.secure_broker import BOB, SecureBroker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def spate(secure: SecureBroker, config: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spate.cli.main", *args, "--bootstrap-server",
                           secure.address("SASL_SSL"), "--command-config", str(config), "--api-timeout-ms", "15000"],
                          capture_output=True, text=True, timeout=60, input=stdin)


@pytest.fixture
def client_properties(secure: SecureBroker, tmp_path: Path) -> Path:
    path = tmp_path / "client.properties"
    path.write_text(
        "# SASL_SSL with SCRAM, as for kafka-topics.sh\n"
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
        f'    username="{BOB[0]}" password="{BOB[1]}";\n'
        f"ssl.truststore.location={secure.certs.ca}\n"
        "ssl.truststore.type=PEM\n")
    return path


def test_topics_produce_consume_and_quotas_over_sasl_ssl(secure: SecureBroker, client_properties: Path) -> None:
    created = spate(secure, client_properties, "topics", "create", "cc-topic", "--partitions", "1")
    assert created.returncode == 0, created.stderr
    listed = spate(secure, client_properties, "topics", "list")
    assert "cc-topic" in listed.stdout, listed.stderr
    produced = spate(secure, client_properties, "produce", "cc-topic", stdin="one\ntwo\n")
    assert produced.returncode == 0, produced.stderr
    consumed = spate(secure, client_properties, "consume", "cc-topic", "--from-beginning", "--max-messages", "2")
    assert consumed.stdout.splitlines() == ["one", "two"], consumed.stderr
    altered = spate(secure, client_properties, "quotas", "alter", "--user", "bob", "--add", "producer_byte_rate=1e6")
    assert altered.returncode == 0, altered.stderr
    described = json.loads(spate(secure, client_properties, "quotas", "describe", "--user", "bob",
                                 "--output", "json").stdout)
    assert described == [{"entity": {"user": "bob"}, "quotas": {"producer_byte_rate": 1e6}}]


def test_a_wrong_password_or_a_bad_property_is_one_line(secure: SecureBroker, client_properties: Path) -> None:
    client_properties.write_text(client_properties.read_text().replace(BOB[1], "wrong"))
    refused = spate(secure, client_properties, "topics", "list")
    assert refused.returncode == 1 and "SASL_AUTHENTICATION_FAILED" in refused.stderr.upper().replace(" ", "_")
    assert len(refused.stderr.strip().splitlines()) == 1
    client_properties.write_text("security.protocol=SSL\nssl.keystore.type=PKCS12\n")
    bad = spate(secure, client_properties, "topics", "list")
    assert bad.returncode == 2 and "ssl.keystore.type: only PEM is supported" in bad.stderr
