"""What ``spate cluster up --secure`` adds: a SASL_SSL dev cluster with SCRAM-SHA-512.

Under the data directory it makes (or reuses) development certificates in
``certs/`` (``spate certs create``), gives the ``admin`` user a fresh random
password, stored as a SCRAM-SHA-512 credential in ZooKeeper
(``/config/users/admin``, Kafka's layout) before any broker starts, and
writes two client files:

* ``client.properties``: Kafka's client properties (``sasl.jaas.config``,
  ``ssl.truststore.location``), for ``--command-config`` and Kafka's tools;
* ``confluent.properties``: the same for librdkafka (confluent-kafka, kcat):
  ``sasl.username``/``sasl.password``, ``ssl.ca.location``.

Every broker has one listener, ``SASL_SSL``, for clients and for the other
brokers, which log in as ``admin`` too.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from spate.cli.certs import CertificateFiles, create_certificates

ADMIN_USER = "admin"
MECHANISM = "SCRAM-SHA-512"
LISTENER = "SASL_SSL"
ITERATIONS = 4096
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


@dataclass(frozen=True)
class SecureSetup:
    certs: CertificateFiles
    password: str
    properties: Path
    confluent_properties: Path

    @property
    def jaas(self) -> str:
        return f'{SCRAM_MODULE} required username="{ADMIN_USER}" password="{self.password}";'

    def client_settings(self) -> dict[str, str]:
        """The client keywords of the admin user (for the cluster's own probes)."""
        return {"security_protocol": "SASL_SSL", "sasl_mechanism": MECHANISM, "sasl_username": ADMIN_USER,
                "sasl_password": self.password, "ssl_truststore_location": str(self.certs.ca)}

    def broker_settings(self, port: int) -> list[str]:
        return [
            f"listeners={LISTENER}://127.0.0.1:{port}",
            f"listener.security.protocol.map={LISTENER}:SASL_SSL",
            f"inter.broker.listener.name={LISTENER}",
            f"ssl.keystore.location={self.certs.broker_keystore}",
            f"ssl.truststore.location={self.certs.ca}",
            f"sasl.enabled.mechanisms={MECHANISM}",
            f"sasl.mechanism.inter.broker.protocol={MECHANISM}",
            f"listener.name.{LISTENER.lower()}.{MECHANISM.lower()}.sasl.jaas.config={self.jaas}",
        ]


def prepare(data_dir: Path, bootstrap: str) -> SecureSetup:
    """Certificates (made once, then reused), a new admin password and the client files."""
    certs = CertificateFiles(data_dir / "certs")
    if not certs.ca.exists():
        certs = create_certificates(data_dir / "certs")
    setup = SecureSetup(certs, secrets.token_urlsafe(18), data_dir / "client.properties",
                        data_dir / "confluent.properties")
    common = f"bootstrap.servers={bootstrap}\nsecurity.protocol=SASL_SSL\nsasl.mechanism={MECHANISM}\n"
    _write_private(setup.properties, common + f"sasl.jaas.config={setup.jaas}\n"
                   f"ssl.truststore.location={certs.ca}\nssl.truststore.type=PEM\n")
    _write_private(setup.confluent_properties, common + f"sasl.username={ADMIN_USER}\n"
                   f"sasl.password={setup.password}\nssl.ca.location={certs.ca}\n")
    return setup


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600)
    path.chmod(0o600)
    path.write_text(text)


def scram_credential_text(password: str, *, iterations: int = ITERATIONS, salt: bytes | None = None) -> str:
    """Kafka's stored form of a SCRAM-SHA-512 credential (RFC 5802 keys, base64)."""
    salt = salt if salt is not None else secrets.token_bytes(32)
    salted = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", "sha512").digest()
    stored_key = hashlib.sha512(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", "sha512").digest()

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()
    return f"salt={b64(salt)},stored_key={b64(stored_key)},server_key={b64(server_key)},iterations={iterations}"


def store_admin_credential(zookeeper: str, password: str, timeout_s: float = 15.0) -> None:
    """Write the admin's SCRAM-SHA-512 credential into ``/config/users/admin``, keeping its other keys."""
    from kazoo.client import KazooClient
    from kazoo.exceptions import NoNodeError

    client = KazooClient(hosts=zookeeper, timeout=timeout_s)
    client.start(timeout=timeout_s)
    try:
        path = f"/config/users/{ADMIN_USER}"
        try:
            data, _ = client.get(path)
            config = json.loads(data or b"{}").get("config", {})
        except NoNodeError:
            config = None
        entries = {**(config or {}), MECHANISM: scram_credential_text(password)}
        document = json.dumps({"version": 1, "config": entries}, sort_keys=True).encode()
        if config is None:
            client.create(path, document, makepath=True)
        else:
            client.set(path, document)
    finally:
        client.stop()
        client.close()
