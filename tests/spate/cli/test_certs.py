"""``spate certs create``: a CA, a broker and a client certificate that verify, with the requested host names."""

from __future__ import annotations

import ipaddress
import ssl
import stat
from pathlib import Path

import pytest
from cryptography import x509

from spate.cli.main import main


def test_creates_verifiable_pem_files_with_the_hosts_as_alternative_names(tmp_path: Path, capsys) -> None:
    directory = tmp_path / "certs"
    assert main(["certs", "create", "--dir", str(directory), "--host", "broker1.example.com",
                 "--host", "10.0.0.7"]) == 0
    assert "ssl.keystore.location" in capsys.readouterr().out
    broker = x509.load_pem_x509_certificate((directory / "broker-cert.pem").read_bytes())
    names = broker.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["broker1.example.com"]
    assert names.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("10.0.0.7")]
    assert stat.S_IMODE((directory / "broker.pem").stat().st_mode) == 0o600
    # The key stores load, and the client trusts the broker through the CA.
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(directory / "broker.pem")
    client = ssl.create_default_context(cafile=str(directory / "ca.pem"))
    client.load_cert_chain(directory / "client.pem")


def test_refuses_to_overwrite_without_force(tmp_path: Path, capsys) -> None:
    assert main(["certs", "create", "--dir", str(tmp_path)]) == 0
    assert main(["certs", "create", "--dir", str(tmp_path)]) == 1
    assert "--force" in capsys.readouterr().err
    assert main(["certs", "create", "--dir", str(tmp_path), "--force"]) == 0


def test_usage_errors_exit_2() -> None:
    assert main(["certs"]) == 2
    with pytest.raises(SystemExit) as raised:
        main(["certs", "create"])  # --dir is required
    assert raised.value.code == 2
