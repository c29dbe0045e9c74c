"""The broker's TLS and SASL properties (Kafka's names), and per-listener overrides.

Any of them may be set for one listener only with Kafka's prefix
``listener.name.<listener name, lower case>.``, e.g.
``listener.name.external.ssl.keystore.location``; JAAS entries are per
listener and mechanism: ``listener.name.<l>.<mechanism, lower case>.sasl.jaas.config``.
:func:`listener_property_base` tells which property a prefixed key overrides,
and :func:`listener_value` reads a property as one listener sees it.

Keystores and truststores are PEM only (``ssl.keystore.type=PEM``). Values of
:data:`SENSITIVE_PROPERTIES` are never shown (DescribeConfigs answers null).
"""

from __future__ import annotations

import re
from typing import Mapping

from broker_core.config.definitions import (
    LONG_MAX,
    ConfigValue,
    PropertyDef,
    PropertyType,
    Range,
    ValidList,
    ValidString,
)

SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
TLS_PROTOCOLS = ("TLSv1.2", "TLSv1.3")
CLIENT_AUTH = ("none", "requested", "required")
LISTENER_PREFIX = "listener.name."
JAAS_CONFIG = "sasl.jaas.config"
# authorizer.class.name values that select Spate's ACL authorizer; empty means no authorization.
AUTHORIZER_CLASS_NAMES = (
    "kafka.security.authorizer.AclAuthorizer",
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "spate.security.AclAuthorizer",
)
SENSITIVE_PROPERTIES = frozenset({
    "ssl.key.password", "ssl.keystore.password", "ssl.truststore.password", "ssl.keystore.key", JAAS_CONFIG,
})

_STRING, _LIST, _INT, _LONG = PropertyType.STRING, PropertyType.LIST, PropertyType.INT, PropertyType.LONG


def _p(name: str, kind: PropertyType, default: ConfigValue, doc: str, validator: object = None) -> PropertyDef:
    return PropertyDef(name=name, type=kind, default=default, doc=doc, validator=validator)  # type: ignore[arg-type]


SECURITY_DEFINITIONS = (
    _p("ssl.keystore.type", _STRING, "PEM", "Format of the key store; only PEM is supported.", ValidString(("PEM",))),
    _p("ssl.keystore.location", _STRING, None, "PEM file with the private key and the certificate chain."),
    _p("ssl.keystore.password", _STRING, None, "Password of the key store (PEM: use ssl.key.password)."),
    _p("ssl.key.password", _STRING, None, "Password of an encrypted private key."),
    _p("ssl.keystore.key", _STRING, None, "The private key in PEM, inline instead of a key store file."),
    _p("ssl.keystore.certificate.chain", _STRING, None, "The certificate chain in PEM, inline."),
    _p("ssl.truststore.type", _STRING, "PEM", "Format of the trust store; only PEM is supported.",
       ValidString(("PEM",))),
    _p("ssl.truststore.location", _STRING, None, "PEM file of the CA certificates to trust."),
    _p("ssl.truststore.password", _STRING, None, "Password of the trust store (unused for PEM)."),
    _p("ssl.truststore.certificates", _STRING, None, "CA certificates to trust in PEM, inline."),
    _p("ssl.client.auth", _STRING, "none", "Whether TLS clients must present a certificate.",
       ValidString(CLIENT_AUTH)),
    _p("ssl.enabled.protocols", _LIST, TLS_PROTOCOLS, "TLS versions accepted.", ValidList(TLS_PROTOCOLS)),
    _p("ssl.protocol", _STRING, "TLSv1.3", "TLS protocol of contexts this broker creates (informational)."),
    _p("ssl.cipher.suites", _LIST, (), "OpenSSL cipher suites allowed for TLSv1.2; empty allows the defaults."),
    _p("ssl.principal.mapping.rules", _STRING, "DEFAULT",
       "Rules mapping a client certificate's subject to a principal name."),
    _p("ssl.endpoint.identification.algorithm", _STRING, "https",
       "Host name verification on the broker's own TLS connections; empty turns it off."),
    _p("sasl.enabled.mechanisms", _LIST, ("PLAIN",), "SASL mechanisms the SASL listeners accept.",
       ValidList(SASL_MECHANISMS)),
    _p("sasl.mechanism.inter.broker.protocol", _STRING, "PLAIN", "SASL mechanism brokers use with each other.",
       ValidString(SASL_MECHANISMS)),
    _p(JAAS_CONFIG, _STRING, None, "JAAS login module entry (set it per listener and mechanism)."),
    _p("connections.max.reauth.ms", _LONG, 0,
       "A SASL session lasts this long before the client must re-authenticate; 0 never expires.",
       Range(0, LONG_MAX)),
    _p("connection.failed.authentication.delay.ms", _INT, 100,
       "How long a failed authentication waits before its answer and the close (slows password guessing).",
       Range(0, None)),
    _p("sasl.server.max.receive.size", _INT, 524288, "Largest request accepted before authentication.",
       Range(1, None)),
    # Authorization (broker_core/security/authorizer/).
    _p("authorizer.class.name", _STRING, "",
       "The authorizer: Kafka's AclAuthorizer or StandardAuthorizer name, or spate.security.AclAuthorizer; "
       "empty allows every request.", ValidString(("", *AUTHORIZER_CLASS_NAMES))),
    _p("super.users", _STRING, "", "Principals allowed everything, separated by ';' (User:admin;User:broker)."),
    _p("allow.everyone.if.no.acl.found", PropertyType.BOOLEAN, False,
       "Whether a resource without any ACL is open to everyone."),
)

_KNOWN = {d.name for d in SECURITY_DEFINITIONS}
_PREFIXED = re.compile(r"listener\.name\.(?P<listener>[a-z0-9_]+)\.(?P<rest>.+)")
_MECHANISM_JAAS = re.compile(r"(?P<mechanism>[a-z0-9-]+)\.sasl\.jaas\.config")


def listener_property_base(key: str) -> str | None:
    """The property a ``listener.name.<l>.`` key overrides, or None when it is not such a key."""
    match = _PREFIXED.fullmatch(key)
    if match is None:
        return None
    rest = match["rest"]
    if rest in _KNOWN:
        return rest
    jaas = _MECHANISM_JAAS.fullmatch(rest)
    if jaas is not None and jaas["mechanism"].upper() in SASL_MECHANISMS:
        return JAAS_CONFIG
    return None


def listener_key(listener_name: str, name: str) -> str:
    return f"{LISTENER_PREFIX}{listener_name.lower()}.{name}"


def listener_value(values: Mapping[str, ConfigValue], listener_name: str, name: str) -> ConfigValue:
    """``name`` as ``listener_name`` sees it: its ``listener.name.<l>.`` override, else the broker-wide value."""
    prefixed = listener_key(listener_name, name)
    return values[prefixed] if prefixed in values else values.get(name)


def jaas_config(values: Mapping[str, ConfigValue], listener_name: str, mechanism: str) -> str | None:
    """The JAAS entry for ``mechanism`` on ``listener_name`` (Kafka looks only at the prefixed keys; the bare
    ``sasl.jaas.config`` is a fallback)."""
    value = listener_value(values, listener_name, f"{mechanism.lower()}.{JAAS_CONFIG}")
    if value is None:
        value = values.get(JAAS_CONFIG)
    return value if isinstance(value, str) else None
