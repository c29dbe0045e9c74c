"""Real clients produce and consume over every security protocol: confluent-kafka, kafka-python, aiokafka, kcat.

Each case writes a few records to a topic of its own through one listener and
reads them back in a consumer group through the same listener.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
import uuid
from typing import Any

import pytest

from tests.scenarios.security.secure_broker import ALICE, BOB, SecureBroker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

RECORDS = [f"record-{i}".encode() for i in range(5)]

# (case, listener, protocol, mechanism or None, user or None, client certificate?)
CASES = [
    ("ssl", "SSL", "SSL", None, None, False),
    ("mtls", "MTLS", "SSL", None, None, True),
    ("sasl-plaintext-plain", "SASL_PLAINTEXT", "SASL_PLAINTEXT", "PLAIN", ALICE, False),
    ("sasl-plaintext-plain-scram-store", "SASL_PLAINTEXT", "SASL_PLAINTEXT", "PLAIN", BOB, False),
    ("sasl-plaintext-scram-256", "SASL_PLAINTEXT", "SASL_PLAINTEXT", "SCRAM-SHA-256", BOB, False),
    ("sasl-plaintext-scram-512", "SASL_PLAINTEXT", "SASL_PLAINTEXT", "SCRAM-SHA-512", BOB, False),
    ("sasl-ssl-plain", "SASL_SSL", "SASL_SSL", "PLAIN", ALICE, False),
    ("sasl-ssl-scram-512", "SASL_SSL", "SASL_SSL", "SCRAM-SHA-512", BOB, False),
]
IDS = [case[0] for case in CASES]


def topic() -> str:
    return f"secure-{uuid.uuid4().hex[:10]}"


def confluent_settings(secure: SecureBroker, case: tuple) -> dict[str, Any]:
    _, listener, protocol, mechanism, credentials, client_cert = case
    settings: dict[str, Any] = {"bootstrap.servers": secure.address(listener), "security.protocol": protocol}
    if protocol.endswith("SSL"):
        settings["ssl.ca.location"] = str(secure.certs.ca)
    if client_cert:
        settings["ssl.certificate.location"] = str(secure.certs.part("client-cert.pem"))
        settings["ssl.key.location"] = str(secure.certs.part("client-key.pem"))
    if mechanism:
        settings.update({"sasl.mechanism": mechanism, "sasl.username": credentials[0],
                         "sasl.password": credentials[1]})
    return settings


def python_settings(secure: SecureBroker, case: tuple) -> dict[str, Any]:
    """kafka-python's and aiokafka's names (aiokafka takes an SSL context instead of files)."""
    _, listener, protocol, mechanism, credentials, client_cert = case
    settings: dict[str, Any] = {"bootstrap_servers": secure.address(listener), "security_protocol": protocol}
    if protocol.endswith("SSL"):
        settings["ssl_cafile"] = str(secure.certs.ca)
    if client_cert:
        settings["ssl_certfile"] = str(secure.certs.part("client-cert.pem"))
        settings["ssl_keyfile"] = str(secure.certs.part("client-key.pem"))
    if mechanism:
        settings.update({"sasl_mechanism": mechanism, "sasl_plain_username": credentials[0],
                         "sasl_plain_password": credentials[1]})
    return settings


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_confluent_kafka(secure: SecureBroker, case: tuple) -> None:
    from confluent_kafka import Consumer, Producer

    name, settings = topic(), confluent_settings(secure, case)
    producer = Producer(settings)
    for value in RECORDS:
        producer.produce(name, value)
    assert producer.flush(30) == 0
    consumer = Consumer({**settings, "group.id": f"g-{name}", "auto.offset.reset": "earliest"})
    consumer.subscribe([name])
    received: list[bytes] = []
    try:
        for _ in range(60):
            message = consumer.poll(0.5)
            if message is not None:
                assert message.error() is None, message.error()
                received.append(message.value())
            if len(received) == len(RECORDS):
                break
    finally:
        consumer.close()
    assert received == RECORDS


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_kafka_python(secure: SecureBroker, case: tuple) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    name, settings = topic(), python_settings(secure, case)
    producer = KafkaProducer(**settings)
    for value in RECORDS:
        producer.send(name, value)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(name, group_id=f"g-{name}", auto_offset_reset="earliest", consumer_timeout_ms=20000,
                             **settings)
    received: list[bytes] = []
    try:
        for message in consumer:
            received.append(message.value)
            if len(received) == len(RECORDS):
                break
    finally:
        consumer.close()
    assert received == RECORDS


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_aiokafka(secure: SecureBroker, case: tuple) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.helpers import create_ssl_context

    settings = python_settings(secure, case)
    files = {key: settings.pop(key) for key in ("ssl_cafile", "ssl_certfile", "ssl_keyfile") if key in settings}
    if files:
        settings["ssl_context"] = create_ssl_context(cafile=files["ssl_cafile"], certfile=files.get("ssl_certfile"),
                                                     keyfile=files.get("ssl_keyfile"))
    name = topic()

    async def run() -> list[bytes]:
        producer = AIOKafkaProducer(**settings)
        await producer.start()
        try:
            for value in RECORDS:
                await producer.send_and_wait(name, value)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(name, group_id=f"g-{name}", auto_offset_reset="earliest", **settings)
        await consumer.start()
        received: list[bytes] = []
        try:
            async with asyncio.timeout(30):
                async for message in consumer:
                    received.append(message.value)
                    if len(received) == len(RECORDS):
                        break
        finally:
            await consumer.stop()
        return received

    assert asyncio.run(run()) == RECORDS


KCAT = shutil.which("kcat")


@pytest.mark.skipif(KCAT is None, reason="kcat is not installed (Debian package 'kcat')")
@pytest.mark.parametrize("case", [CASES[0], CASES[2], CASES[5], CASES[7]], ids=[IDS[0], IDS[2], IDS[5], IDS[7]])
def test_kcat(secure: SecureBroker, case: tuple) -> None:
    settings = confluent_settings(secure, case)
    bootstrap = settings.pop("bootstrap.servers")
    options = [arg for key, value in settings.items() for arg in ("-X", f"{key}={value}")]
    name = topic()
    lines = "\n".join(value.decode() for value in RECORDS) + "\n"

    def kcat(*args: str, stdin: str | None = None) -> str:
        result = subprocess.run([KCAT or "kcat", "-b", bootstrap, *options, *args], input=stdin,
                                capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr[-2000:]
        return result.stdout

    kcat("-P", "-t", name, stdin=lines)
    assert kcat("-C", "-t", name, "-o", "beginning", "-e", "-q") == lines


def spate_settings(secure: SecureBroker, case: tuple) -> dict[str, Any]:
    """Spate's client: Kafka's client property names with underscores."""
    _, listener, protocol, mechanism, credentials, client_cert = case
    settings: dict[str, Any] = {"security_protocol": protocol}
    if protocol.endswith("SSL"):
        settings["ssl_truststore_location"] = str(secure.certs.ca)
    if client_cert:
        settings["ssl_keystore_location"] = str(secure.certs.client_keystore)
    if mechanism:
        settings.update({"sasl_mechanism": mechanism, "sasl_username": credentials[0],
                         "sasl_password": credentials[1]})
    return settings


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_spate_client(secure: SecureBroker, case: tuple) -> None:
    from spate import Consumer, Producer

    name, settings = topic(), spate_settings(secure, case)
    address = secure.address(case[1])
    with Producer(address, **settings) as producer:
        for value in RECORDS:
            producer.send(name, value=value)
        producer.flush(30)
    received: list[bytes] = []
    with Consumer(address, group_id=f"g-{name}", auto_offset_reset="earliest", **settings) as consumer:
        consumer.subscribe([name])
        deadline = time.monotonic() + 30
        while len(received) < len(RECORDS) and time.monotonic() < deadline:
            received.extend(record.value for record in consumer.poll(timeout_ms=500))
    assert received == RECORDS


def test_spate_client_with_a_wrong_password_gets_a_clean_error(secure: SecureBroker) -> None:
    from spate import Admin, KafkaError

    with pytest.raises(KafkaError) as raised:
        with Admin(secure.address("SASL_PLAINTEXT"), security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-512",
                   sasl_username=BOB[0], sasl_password="wrong", default_api_timeout_ms=10000) as admin:
            admin.list_topics()
    assert "SASL_AUTHENTICATION_FAILED" in str(raised.value) or "invalid credentials" in str(raised.value)
