"""What one listener demands of its connections: TLS, SASL, or both, per its security protocol.

Built from the configuration when the socket server starts (a TLS key store
or a JAAS entry that cannot be used stops the broker with the key named);
the SCRAM credential store is attached once the metadata store is open.
Every connection then gets its own
:class:`~broker_core.security.sasl.authenticator.SaslServerAuthenticator` on
a SASL listener, and its TLS principal on an SSL one.
"""

from __future__ import annotations

import hmac
import ssl
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.errors import ConfigError
from broker_core.config.listeners import Listener
from broker_core.config.security_properties import jaas_config, listener_key, listener_value
from broker_core.security.credentials import ScramCredentialStore
from broker_core.security.principal import ANONYMOUS, InvalidMappingRuleError, KafkaPrincipal, SslPrincipalMapper
from broker_core.security.sasl.authenticator import SaslServer, SaslServerAuthenticator
from broker_core.security.sasl.jaas import JaasConfigError, parse_jaas_config
from broker_core.security.sasl.plain import PlainServer
from broker_core.security.sasl.scram import (
    MECHANISMS,
    SCRAM_SHA_256,
    SCRAM_SHA_512,
    ScramCredential,
    ScramMechanism,
    ScramServer,
)
from broker_core.security.tls import peer_principal, server_context

TLS_PROTOCOLS = ("SSL", "SASL_SSL")
SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")


@dataclass
class AuthenticationCounters:
    """SASL outcomes per listener (Kafka's ``successful-`` and ``failed-authentication-total``)."""

    successful: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)

    @classmethod
    def for_listeners(cls, names: Iterable[str]) -> AuthenticationCounters:
        """Every listener counted from 0, so each one's series exists before anything authenticates."""
        names = list(names)
        return cls(dict.fromkeys(names, 0), dict.fromkeys(names, 0))

    def record(self, listener: str, *, success: bool) -> None:
        counts = self.successful if success else self.failed
        counts[listener] = counts.get(listener, 0) + 1

    @property
    def failed_total(self) -> int:
        return sum(self.failed.values())


@dataclass
class ListenerSecurity:
    listener_name: str
    security_protocol: str
    clock: Callable[[], int]
    counters: AuthenticationCounters
    ssl_context: ssl.SSLContext | None = None
    principal_mapper: SslPrincipalMapper | None = None
    mechanisms: tuple[str, ...] = ()
    reauth_ms: int = 0
    failed_delay_ms: int = 100
    max_receive_size: int = 524288
    # PLAIN's users from the listener's JAAS entry (user_<name>="<password>").
    plain_users: Mapping[str, str] = field(default_factory=dict)
    credentials: ScramCredentialStore | None = None

    @property
    def uses_tls(self) -> bool:
        return self.ssl_context is not None

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol in SASL_PROTOCOLS

    def tls_principal(self, ssl_object: ssl.SSLObject | None) -> KafkaPrincipal:
        if ssl_object is None or self.principal_mapper is None:
            return ANONYMOUS
        return peer_principal(ssl_object, self.principal_mapper)

    def new_authenticator(self) -> SaslServerAuthenticator | None:
        if not self.uses_sasl:
            return None
        return SaslServerAuthenticator(mechanisms=self.mechanisms, new_server=self._new_server, clock=self.clock,
                                       reauth_ms=self.reauth_ms)

    def _new_server(self, mechanism: str) -> SaslServer:
        if mechanism == "PLAIN":
            return PlainServer(self._check_plain)
        return ScramServer(MECHANISMS[mechanism], self._scram_credential)

    def _scram_credential(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        return self.credentials.get(user, mechanism) if self.credentials is not None else None

    def _check_plain(self, user: str, password: str) -> bool:
        expected = self.plain_users.get(user)
        if expected is not None:
            return hmac.compare_digest(expected.encode(), password.encode())
        for mechanism in (SCRAM_SHA_512, SCRAM_SHA_256):
            credential = self._scram_credential(user, mechanism)
            if credential is not None:
                return credential.matches_password(mechanism, password)
        return False


def listener_security(config: BrokerConfig, listener: Listener, clock: Callable[[], int],
                      counters: AuthenticationCounters) -> ListenerSecurity:
    """Check and build what ``listener`` needs; raises :class:`ConfigError` naming the setting to fix."""
    values, name = config.values, listener.name
    security = ListenerSecurity(name, listener.security_protocol, clock, counters)
    if listener.security_protocol in TLS_PROTOCOLS:
        security.ssl_context = server_context(values, name)
        rules = str(listener_value(values, name, "ssl.principal.mapping.rules") or "DEFAULT")
        try:
            security.principal_mapper = SslPrincipalMapper.from_rules(rules)
        except InvalidMappingRuleError as exc:
            raise ConfigError(str(exc), key="ssl.principal.mapping.rules") from None
    if security.uses_sasl:
        mechanisms = listener_value(values, name, "sasl.enabled.mechanisms") or ()
        security.mechanisms = tuple(mechanisms)  # type: ignore[arg-type]
        security.reauth_ms = int(listener_value(values, name, "connections.max.reauth.ms") or 0)
        security.failed_delay_ms = int(config.get_int("connection.failed.authentication.delay.ms"))
        security.max_receive_size = int(listener_value(values, name, "sasl.server.max.receive.size") or 524288)
        if "PLAIN" in security.mechanisms:
            security.plain_users = _plain_users(values, name)
    return security


def _plain_users(values: Mapping[str, object], listener_name: str) -> dict[str, str]:
    text = jaas_config(values, listener_name, "PLAIN")  # type: ignore[arg-type]
    if text is None:
        return {}  # PLAIN checks passwords against the SCRAM store only
    try:
        return parse_jaas_config(text).users
    except JaasConfigError as exc:
        raise ConfigError(str(exc), key=listener_key(listener_name, "plain.sasl.jaas.config")) from None
