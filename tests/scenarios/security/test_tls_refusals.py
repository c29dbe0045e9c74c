"""What a TLS listener refuses, and that the broker stays healthy after each refusal."""

from __future__ import annotations

import socket
import ssl
from pathlib import Path

import pytest

from spate.cli.certs import create_certificates
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import encode_request
from spate.protocol.messages.api_versions import ApiVersionsRequest
from tests.scenarios.security.secure_broker import SecureBroker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def tls_connect(secure: SecureBroker, listener: str, context: ssl.SSLContext) -> ssl.SSLSocket:
    sock = socket.create_connection(("127.0.0.1", secure.ports[listener]), timeout=10)
    try:
        tls = context.wrap_socket(sock, server_hostname="127.0.0.1")
        # TLSv1.3 reports a refused client certificate on the first read, not in the handshake.
        tls.sendall(encode_request(ApiKey.API_VERSIONS, 0, 1, "tls-test", ApiVersionsRequest()))
        if not tls.recv(4):
            raise ConnectionError("closed by the broker")
        return tls
    except BaseException:
        sock.close()
        raise


def healthy(secure: SecureBroker) -> bool:
    context = ssl.create_default_context(cafile=str(secure.certs.ca))
    tls_connect(secure, "SSL", context).close()
    return True


def test_a_plaintext_client_on_a_tls_port_is_closed(secure: SecureBroker) -> None:
    received = b""
    with socket.create_connection(("127.0.0.1", secure.ports["SSL"]), timeout=10) as sock:
        sock.sendall(encode_request(ApiKey.API_VERSIONS, 0, 1, "plain", ApiVersionsRequest()))
        try:
            for _ in range(10):  # at most a TLS alert, then the close
                chunk = sock.recv(1024)
                if not chunk:
                    break
                received += chunk
        except ConnectionResetError:
            pass
    assert len(received) < 64  # no ApiVersions answer (that is hundreds of bytes)
    assert healthy(secure)


def test_a_client_that_does_not_trust_the_broker_gives_up(secure: SecureBroker, tmp_path: Path) -> None:
    other = create_certificates(tmp_path / "other")
    with pytest.raises(ssl.SSLCertVerificationError):
        tls_connect(secure, "SSL", ssl.create_default_context(cafile=str(other.ca)))
    assert healthy(secure)


def test_mtls_refuses_a_client_without_a_certificate(secure: SecureBroker) -> None:
    with pytest.raises((ssl.SSLError, ConnectionError)):
        tls_connect(secure, "MTLS", ssl.create_default_context(cafile=str(secure.certs.ca)))
    assert healthy(secure)


def test_mtls_refuses_a_certificate_from_another_ca(secure: SecureBroker, tmp_path: Path) -> None:
    other = create_certificates(tmp_path / "other")
    context = ssl.create_default_context(cafile=str(secure.certs.ca))
    context.load_cert_chain(str(other.client_keystore))
    with pytest.raises((ssl.SSLError, ConnectionError)):
        tls_connect(secure, "MTLS", context)
    assert healthy(secure)


def test_mtls_accepts_the_client_certificate(secure: SecureBroker) -> None:
    context = ssl.create_default_context(cafile=str(secure.certs.ca))
    context.load_cert_chain(str(secure.certs.client_keystore))
    tls_connect(secure, "MTLS", context).close()
