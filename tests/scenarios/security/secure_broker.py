"""A broker with one listener per security protocol, development certificates and a few users.

Listeners (all on 127.0.0.1): PLAINTEXT (the broker's own port, used to
wait for it), SSL, SASL_PLAINTEXT, SASL_SSL, MTLS (SSL with
``ssl.client.auth=required`` and a mapping rule that keeps the certificate's
CN, lower-cased) and REAUTH (SASL_PLAINTEXT whose sessions last
:data:`REAUTH_MS`). PLAIN knows ``alice`` from the JAAS entry; ``bob`` has
SCRAM-SHA-256 and SCRAM-SHA-512 credentials (PLAIN accepts him too, through
the SCRAM store).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from broker_core.security.credentials import FileScramCredentialStore
from broker_core.security.sasl.scram import SCRAM_SHA_256, SCRAM_SHA_512, ScramCredential
from spate.cli.certs import CertificateFiles, create_certificates
from tests.support.broker_process import BrokerProcess
from tests.support.ports import free_port

ALICE = ("alice", "alice-secret")
BOB = ("bob", "bob-secret")
REAUTH_MS = 2000
JAAS = f'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="{ALICE[1]}";'
PROTOCOLS = {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT", "SASL_SSL": "SASL_SSL",
             "MTLS": "SSL", "REAUTH": "SASL_PLAINTEXT"}


@dataclass
class SecureBroker:
    process: BrokerProcess
    ports: dict[str, int]
    certs: CertificateFiles
    metrics_port: int

    def address(self, listener: str) -> str:
        return f"127.0.0.1:{self.ports[listener]}"

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"


def secure_broker(directory: Path) -> SecureBroker:
    certs = create_certificates(directory / "certs")
    process = BrokerProcess(directory / "broker")
    ports = {name: free_port() for name in PROTOCOLS}
    ports["PLAINTEXT"] = process.port
    metrics_port = free_port()
    store = FileScramCredentialStore(_mkdir(process.log_dir))
    for mechanism in (SCRAM_SHA_256, SCRAM_SHA_512):
        store.upsert(BOB[0], mechanism, ScramCredential.from_password(mechanism, BOB[1]))
    process.overrides.update({
        "listeners": ",".join(f"{name}://127.0.0.1:{port}" for name, port in ports.items()),
        "listener.security.protocol.map": ",".join(f"{name}:{protocol}" for name, protocol in PROTOCOLS.items()),
        "inter.broker.listener.name": "PLAINTEXT",
        "ssl.keystore.location": str(certs.broker_keystore),
        "ssl.truststore.location": str(certs.ca),
        "listener.name.mtls.ssl.client.auth": "required",
        "listener.name.mtls.ssl.principal.mapping.rules": "RULE:^CN=([^,]*),.*$/$1/L,DEFAULT",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "listener.name.sasl_ssl.plain.sasl.jaas.config": JAAS,
        "listener.name.reauth.plain.sasl.jaas.config": JAAS,
        "listener.name.reauth.connections.max.reauth.ms": str(REAUTH_MS),
        "metrics.http.listener": f"http://127.0.0.1:{metrics_port}",
    })
    return SecureBroker(process, ports, certs, metrics_port)


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
