"""TLS contexts from the broker's ``ssl.*`` properties (PEM key and trust stores), and the mTLS principal.

A PEM key store is one file holding the private key (encrypted with
``ssl.key.password``, or not) and the certificate chain, leaf first; instead
of a file, ``ssl.keystore.key`` and ``ssl.keystore.certificate.chain`` may
hold the PEM text itself. The trust store is a PEM file of CA certificates
(``ssl.truststore.location``) or their text (``ssl.truststore.certificates``).
``ssl.client.auth`` decides whether clients must (``required``), may
(``requested``) or need not (``none``) present a certificate signed by a
trusted CA. ``ssl.enabled.protocols`` bounds the TLS versions and
``ssl.cipher.suites`` (OpenSSL names) restricts TLSv1.2's ciphers.

Every setting is read as the listener sees it (``listener.name.<l>.ssl.*``
first). A setting that cannot be used is a :class:`ConfigError` naming the key.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from dataclasses import dataclass
from typing import Mapping

from broker_core.config.definitions import ConfigValue
from broker_core.config.errors import ConfigError
from broker_core.config.security_properties import listener_key, listener_value
from broker_core.security.principal import ANONYMOUS, KafkaPrincipal, SslPrincipalMapper, distinguished_name, user

_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


@dataclass(frozen=True)
class ListenerSsl:
    """``ssl.*`` as one listener sees them."""

    values: Mapping[str, ConfigValue]
    listener_name: str

    def get(self, name: str) -> ConfigValue:
        return listener_value(self.values, self.listener_name, name)

    def text(self, name: str) -> str | None:
        value = self.get(name)
        return value if isinstance(value, str) and value.strip() else None

    def error(self, name: str, message: str) -> ConfigError:
        key = listener_key(self.listener_name, name)
        return ConfigError(message, key=key if key in self.values else name)


def server_context(values: Mapping[str, ConfigValue], listener_name: str) -> ssl.SSLContext:
    """The TLS context of an SSL or SASL_SSL listener."""
    settings = ListenerSsl(values, listener_name)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _restrict(context, settings)
    _load_key_store(context, settings, required=True)
    client_auth = str(settings.get("ssl.client.auth") or "none")
    context.verify_mode = _CLIENT_AUTH[client_auth]
    loaded = _load_trust_store(context, settings)
    if client_auth != "none" and not loaded:
        raise settings.error("ssl.truststore.location",
                             f"ssl.client.auth={client_auth} on listener {listener_name} needs a trust store to check "
                             "client certificates")
    return context


def client_context(values: Mapping[str, ConfigValue], listener_name: str) -> ssl.SSLContext:
    """The context of this broker's own connections to a TLS listener of another broker: it trusts the trust
    store (else the system's CAs) and presents its key store when it has one (for ``ssl.client.auth``)."""
    settings = ListenerSsl(values, listener_name)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    _restrict(context, settings)
    if not _load_trust_store(context, settings):
        context.load_default_certs()
    _load_key_store(context, settings, required=False)
    context.check_hostname = bool(settings.text("ssl.endpoint.identification.algorithm"))
    return context


def _restrict(context: ssl.SSLContext, settings: ListenerSsl) -> None:
    protocols = settings.get("ssl.enabled.protocols") or ()
    versions = sorted(_VERSIONS[name] for name in protocols if name in _VERSIONS)
    if not versions:
        raise settings.error("ssl.enabled.protocols", "must enable TLSv1.2 or TLSv1.3")
    context.minimum_version, context.maximum_version = versions[0], versions[-1]
    suites = settings.get("ssl.cipher.suites") or ()
    if suites:
        try:
            context.set_ciphers(":".join(suites))
        except ssl.SSLError:
            raise settings.error("ssl.cipher.suites", "names no cipher suite OpenSSL knows") from None


def _load_key_store(context: ssl.SSLContext, settings: ListenerSsl, *, required: bool) -> None:
    location = settings.text("ssl.keystore.location")
    key, chain = settings.text("ssl.keystore.key"), settings.text("ssl.keystore.certificate.chain")
    password = settings.text("ssl.key.password") or settings.text("ssl.keystore.password")
    if location is None and (key is None or chain is None):
        if required:
            raise settings.error("ssl.keystore.location",
                                 f"listener {settings.listener_name} serves TLS and needs a key store: "
                                 "ssl.keystore.location, or ssl.keystore.key and ssl.keystore.certificate.chain")
        return
    if location is not None:
        _load_chain(context, settings, "ssl.keystore.location", location, password)
        return
    # The ssl module loads keys from files only: a private, short-lived one.
    descriptor, path = tempfile.mkstemp(prefix="spate-key-", suffix=".pem")
    try:
        with os.fdopen(descriptor, "w") as file:
            file.write(f"{key.strip()}\n{chain.strip()}\n")  # type: ignore[union-attr]
        _load_chain(context, settings, "ssl.keystore.key", path, password)
    finally:
        os.unlink(path)


def _load_chain(context: ssl.SSLContext, settings: ListenerSsl, key: str, path: str, password: str | None) -> None:
    try:
        context.load_cert_chain(path, password=password)
    except FileNotFoundError:
        raise settings.error(key, f"key store {path} does not exist") from None
    except ssl.SSLError as exc:
        raise settings.error(key, f"cannot load the private key and certificate chain ({exc.reason or exc}); "
                                  "check the PEM file and ssl.key.password") from None
    except OSError as exc:
        raise settings.error(key, f"cannot read the key store: {exc.strerror or exc}") from None


def _load_trust_store(context: ssl.SSLContext, settings: ListenerSsl) -> bool:
    location, certificates = settings.text("ssl.truststore.location"), settings.text("ssl.truststore.certificates")
    try:
        if location is not None:
            context.load_verify_locations(cafile=location)
        elif certificates is not None:
            context.load_verify_locations(cadata=certificates)
        else:
            return False
    except FileNotFoundError:
        raise settings.error("ssl.truststore.location", f"trust store {location} does not exist") from None
    except (ssl.SSLError, OSError) as exc:
        key = "ssl.truststore.location" if location is not None else "ssl.truststore.certificates"
        raise settings.error(key, f"cannot load the trusted certificates ({exc})") from None
    return True


def peer_principal(ssl_object: ssl.SSLObject | None, mapper: SslPrincipalMapper) -> KafkaPrincipal:
    """The principal of a TLS client: its certificate's mapped subject, else ANONYMOUS."""
    if ssl_object is None:
        return ANONYMOUS
    certificate = ssl_object.getpeercert()
    if not certificate or "subject" not in certificate:
        return ANONYMOUS
    return user(mapper.name(distinguished_name(certificate["subject"])))
