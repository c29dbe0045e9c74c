"""``spate certs create``: a development CA, a broker certificate and a client certificate, as PEM files.

Files written to ``--dir``:

* ``ca.pem`` (the CA certificate: the trust store of brokers and clients) and
  ``ca-key.pem`` (its key: keep it to sign more certificates);
* ``broker.pem`` (key store: the broker's private key, certificate and the CA
  certificate, what ``ssl.keystore.location`` names), ``broker-cert.pem`` and
  ``broker-key.pem`` (the same parts apart, for tools that want them so);
* ``client.pem``, ``client-cert.pem``, ``client-key.pem``: the same for a
  client (mTLS, ``ssl.client.auth=required``), subject ``CN=<--client-name>``.

The broker certificate names every ``--host`` as a subject alternative name
(default ``localhost`` and ``127.0.0.1``); clients that check host names
(all of them, by default) need the name they connect to in that list.
Private keys are written unencrypted with mode 0600 unless ``--key-password``
is given. These are for development: production brokers use certificates from
the organisation's CA (see README, "Security").
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from spate.cli.common import add_output_argument, command_group, print_json
from spate.cli.errors import CliError

DEFAULT_HOSTS = ("localhost", "127.0.0.1")
VALID_DAYS = 365


@dataclass(frozen=True)
class CertificateFiles:
    directory: Path

    @property
    def ca(self) -> Path:
        return self.directory / "ca.pem"

    @property
    def broker_keystore(self) -> Path:
        return self.directory / "broker.pem"

    @property
    def client_keystore(self) -> Path:
        return self.directory / "client.pem"

    def part(self, name: str) -> Path:
        return self.directory / name


def register(commands: argparse._SubParsersAction) -> None:
    actions = command_group(commands, "certs", "make TLS certificates for development")
    create = actions.add_parser("create", help="make a CA, a broker certificate and a client certificate",
                                description="Write a development CA, a broker certificate (with the given host "
                                "names) and a client certificate as PEM files.")
    create.add_argument("--dir", required=True, type=Path, help="directory to write the PEM files to")
    create.add_argument("--host", action="append", dest="hosts", metavar="HOST",
                        help="a host name or IP address the broker is reached at (repeatable; default localhost "
                        "and 127.0.0.1)")
    create.add_argument("--client-name", default="client", help="common name of the client certificate")
    create.add_argument("--key-password", default=None, help="encrypt the private keys with this password")
    create.add_argument("--force", action="store_true", help="overwrite existing files")
    add_output_argument(create)
    create.set_defaults(func=_run_create)


def _run_create(args: argparse.Namespace) -> int:
    files = create_certificates(args.dir, tuple(args.hosts or DEFAULT_HOSTS), client_name=args.client_name,
                                key_password=args.key_password, overwrite=args.force)
    if args.output == "json":
        print_json({"directory": str(files.directory), "ca": str(files.ca),
                    "broker_keystore": str(files.broker_keystore), "client_keystore": str(files.client_keystore)})
        return 0
    print(f"wrote a CA, a broker and a client certificate to {files.directory}")
    print(f"  broker: ssl.keystore.location={files.broker_keystore} ssl.truststore.location={files.ca}")
    print(f"  client: ssl.ca.location / ssl.truststore.location={files.ca}")
    return 0


def create_certificates(directory: Path, hosts: tuple[str, ...] = DEFAULT_HOSTS, *, client_name: str = "client",
                        key_password: str | None = None, overwrite: bool = False) -> CertificateFiles:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    files = CertificateFiles(directory)
    if files.ca.exists() and not overwrite:
        raise CliError(f"{files.ca} exists; pass --force to replace the certificates in {directory}")
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    encryption = (serialization.BestAvailableEncryption(key_password.encode()) if key_password
                  else serialization.NoEncryption())

    def name(common_name: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Spate development"),
                          x509.NameAttribute(NameOID.COMMON_NAME, common_name)])

    def certificate(subject: x509.Name, key: ec.EllipticCurvePrivateKey, issuer: x509.Name,
                    issuer_key: ec.EllipticCurvePrivateKey, *, ca: bool,
                    extensions: list[tuple[x509.ExtensionType, bool]] = ()) -> x509.Certificate:
        builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
                   .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False))
        for extension, critical in extensions:
            builder = builder.add_extension(extension, critical=critical)
        return builder.sign(issuer_key, hashes.SHA256())

    def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)

    def cert_pem(cert: x509.Certificate) -> bytes:
        return cert.public_bytes(serialization.Encoding.PEM)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name("Spate development CA")
    ca_cert = certificate(ca_name, ca_key, ca_name, ca_key, ca=True, extensions=[
        (x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                       key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
                       decipher_only=False), True)])
    _write(files.ca, cert_pem(ca_cert), private=False)
    _write(files.part("ca-key.pem"), key_pem(ca_key), private=True)
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    for role, common_name, usage, extra in (
        ("broker", hosts[0] if hosts else "localhost", ExtendedKeyUsageOID.SERVER_AUTH,
         [(x509.SubjectAlternativeName(names), False)]),
        ("client", client_name, ExtendedKeyUsageOID.CLIENT_AUTH, []),
    ):
        key = ec.generate_private_key(ec.SECP256R1())
        # A broker also connects to other brokers as a client (mTLS between brokers).
        usages = [usage, ExtendedKeyUsageOID.CLIENT_AUTH] if role == "broker" else [usage]
        cert = certificate(name(common_name), key, ca_name, ca_key, ca=False,
                           extensions=[(x509.ExtendedKeyUsage(usages), False), *extra])
        _write(files.part(f"{role}-key.pem"), key_pem(key), private=True)
        _write(files.part(f"{role}-cert.pem"), cert_pem(cert), private=False)
        _write(files.part(f"{role}.pem"), key_pem(key) + cert_pem(cert) + cert_pem(ca_cert), private=True)
    return files


def _write(path: Path, data: bytes, *, private: bool) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)
