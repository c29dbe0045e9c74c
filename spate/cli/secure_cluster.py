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

ZooKeeper takes SASL DIGEST-MD5 logins: it reads ``zookeeper_jaas.conf``
(a ``Server`` section with the user ``kafka`` and a fresh random password),
the brokers log in from ``broker_jaas.conf`` (its ``Client`` section) and run
with ``zookeeper.set.acl=true``, so only they may change the cluster's
znodes and only they may read the credentials under ``/config/users``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spate.cli.certs import CertificateFiles, create_certificates

ADMIN_USER = "admin"
MECHANISM = "SCRAM-SHA-512"
LISTENER = "SASL_SSL"
ITERATIONS = 4096
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
ZOOKEEPER_USER = "kafka"
DIGEST_MODULE = "org.apache.zookeeper.server.auth.DigestLoginModule"


@dataclass(frozen=True)
class SecureSetup:
    certs: CertificateFiles
    password: str
    properties: Path
    confluent_properties: Path
    zookeeper_password: str
    zookeeper_jaas: Path  # ZooKeeper's Server section
    broker_jaas: Path  # the brokers' Client section

    def zookeeper_sasl_options(self) -> dict[str, str]:
        """kazoo's login as the brokers' ZooKeeper user."""
        return {"mechanism": "DIGEST-MD5", "username": ZOOKEEPER_USER, "password": self.zookeeper_password}

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
            f"java.security.auth.login.config={self.broker_jaas}",
            "zookeeper.set.acl=true",
        ]


def prepare(data_dir: Path, bootstrap: str) -> SecureSetup:
    """Certificates (made once, then reused), a new admin password and the client files."""
    certs = CertificateFiles(data_dir / "certs")
    if not certs.ca.exists():
        certs = create_certificates(data_dir / "certs")
    setup = SecureSetup(certs, secrets.token_urlsafe(18), data_dir / "client.properties",
                        data_dir / "confluent.properties", secrets.token_urlsafe(18),
                        data_dir / "zookeeper_jaas.conf", data_dir / "broker_jaas.conf")
    _write_private(setup.zookeeper_jaas, f'Server {{\n  {DIGEST_MODULE} required\n'
                   f'  user_{ZOOKEEPER_USER}="{setup.zookeeper_password}";\n}};\n')
    _write_private(setup.broker_jaas, f'Client {{\n  {DIGEST_MODULE} required\n  username="{ZOOKEEPER_USER}"\n'
                   f'  password="{setup.zookeeper_password}";\n}};\n')
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


def store_admin_credential(zookeeper: str, setup: SecureSetup, timeout_s: float = 15.0) -> None:
    """Write the admin's SCRAM-SHA-512 credential into ``/config/users/admin``, keeping its other keys.

    It logs in as the brokers do and creates what is missing with the ACLs they would give it.
    """
    from kazoo.client import KazooClient
    from kazoo.exceptions import NoNodeError

    password = setup.password
    client = KazooClient(hosts=zookeeper, timeout=timeout_s, sasl_options=setup.zookeeper_sasl_options())
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
            _create_as_brokers_do(client, path, document)
        else:
            client.set(path, document)
    finally:
        client.stop()
        client.close()


def _create_as_brokers_do(client: Any, path: str, data: bytes) -> None:
    """Create ``path`` and its missing parents with the ACLs of brokers under ``zookeeper.set.acl``.

    The login user may do anything, everyone else may read, except under ``/config/users`` (credentials).
    """
    from kazoo.exceptions import NodeExistsError
    from kazoo.security import CREATOR_ALL_ACL, READ_ACL_UNSAFE

    names = path.strip("/").split("/")
    for depth in range(1, len(names) + 1):
        prefix = "/" + "/".join(names[:depth])
        acl = list(CREATOR_ALL_ACL) + ([] if prefix.startswith("/config/users") else list(READ_ACL_UNSAFE))
        try:
            client.create(prefix, data if depth == len(names) else b"", acl=acl)
        except NodeExistsError:
            if depth == len(names):
                raise
