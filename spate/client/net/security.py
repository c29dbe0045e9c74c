"""How the client secures its connections: Kafka's ``security.protocol`` with TLS and SASL settings.

Settings (on every client, Kafka's client property names with underscores):

* ``security_protocol``: PLAINTEXT (default), SSL, SASL_PLAINTEXT or SASL_SSL;
* ``ssl_truststore_location``: PEM file of the CAs to trust (default: the
  system's); ``ssl_keystore_location``: PEM file with this client's key and
  certificate chain, for brokers that require client certificates
  (``ssl_key_password`` if the key is encrypted);
  ``ssl_endpoint_identification_algorithm``: ``"https"`` (default) checks the
  broker's host name, ``""`` does not;
* ``sasl_mechanism``: PLAIN (default), SCRAM-SHA-256 or SCRAM-SHA-512, with
  ``sasl_username`` and ``sasl_password``.

TLS is set up on the blocking socket before the connection turns
non-blocking; SASL runs after ApiVersions, as SaslHandshake v1 and
SaslAuthenticate requests (KIP-152), and the server's SCRAM signature is
checked. A refused login is an :class:`AuthenticationError`, which is not
retried.
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from typing import Any

from spate.protocol.sasl import MECHANISMS, SaslClient

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


def check_security_settings(config: Any) -> None:
    """Validate a client config's security settings (ValueError naming the setting)."""
    protocol = config.security_protocol.upper()
    if protocol not in SECURITY_PROTOCOLS:
        raise ValueError(f"security_protocol must be one of {', '.join(SECURITY_PROTOCOLS)}, not "
                         f"{config.security_protocol!r}")
    if protocol.startswith("SASL"):
        if config.sasl_mechanism.upper() not in MECHANISMS:
            raise ValueError(f"sasl_mechanism must be one of {', '.join(MECHANISMS)}, not {config.sasl_mechanism!r}")
        if config.sasl_username is None or config.sasl_password is None:
            raise ValueError(f"security_protocol {protocol} needs sasl_username and sasl_password")


@dataclass(frozen=True)
class ClientSecurity:
    ssl_context: ssl.SSLContext | None = None
    sasl_mechanism: str | None = None
    sasl_username: str = ""
    sasl_password: str = ""

    @classmethod
    def from_config(cls, config: Any) -> ClientSecurity | None:
        protocol = config.security_protocol.upper()
        if protocol == "PLAINTEXT":
            return None
        context = None
        if protocol in ("SSL", "SASL_SSL"):
            context = ssl.create_default_context(cafile=config.ssl_truststore_location)
            context.check_hostname = bool(config.ssl_endpoint_identification_algorithm)
            if config.ssl_keystore_location:
                context.load_cert_chain(config.ssl_keystore_location, password=config.ssl_key_password)
        if not protocol.startswith("SASL"):
            return cls(context)
        return cls(context, config.sasl_mechanism.upper(), config.sasl_username, config.sasl_password)

    def wrap(self, sock: socket.socket, host: str, timeout: float) -> socket.socket:
        """TLS over a connected blocking socket (the handshake bounded by ``timeout``)."""
        if self.ssl_context is None:
            return sock
        sock.settimeout(timeout)
        return self.ssl_context.wrap_socket(sock, server_hostname=host)

    def new_sasl_client(self) -> SaslClient | None:
        if self.sasl_mechanism is None:
            return None
        return SaslClient(self.sasl_mechanism, self.sasl_username, self.sasl_password)

    def __repr__(self) -> str:
        return f"ClientSecurity(tls={self.ssl_context is not None}, sasl={self.sasl_mechanism})"
