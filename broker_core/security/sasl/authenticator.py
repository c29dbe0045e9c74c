"""One connection's SASL state (Kafka's ``SaslServerAuthenticator``), without sockets.

States and the requests each accepts::

    HANDSHAKE       ApiVersions, SaslHandshake            -> AUTHENTICATE
    AUTHENTICATE    SaslAuthenticate (repeated per round) -> COMPLETE, or FAILED
    COMPLETE        anything; SaslHandshake starts re-authentication (KIP-368) -> AUTHENTICATE
    FAILED          nothing: the connection closes once the failure is answered

Before authentication any other request closes the connection, as Kafka
does. SaslHandshake v1 is followed by SaslAuthenticate requests (KIP-152);
v0 by raw SASL tokens, each in a bare size-prefixed frame, which the
connection hands to :meth:`evaluate_raw`.

With ``connections.max.reauth.ms`` above zero a session lasts that long:
SaslAuthenticate v1+ tells the client (``session_lifetime_ms``) so it
re-authenticates in time; a request other than SaslHandshake and
SaslAuthenticate after the session expired closes the connection.
Re-authentication must use the same mechanism and prove the same principal.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from broker_core.security.principal import KafkaPrincipal, user
from broker_core.security.sasl.plain import PlainAuthenticationError
from broker_core.security.sasl.scram import ScramAuthenticationError, ScramFormatError
from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode

PRE_AUTHENTICATION_APIS = frozenset({ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE})


class SaslState(enum.Enum):
    HANDSHAKE = "handshake"
    AUTHENTICATE = "authenticate"
    COMPLETE = "complete"
    FAILED = "failed"


class SaslServer(Protocol):
    username: str | None
    complete: bool

    def evaluate(self, response: bytes) -> bytes: ...


class IllegalSaslStateError(Exception):
    """A request the current state does not allow: the connection must close."""


@dataclass
class AuthenticateOutcome:
    """What to answer a SaslAuthenticate (or a raw token), and whether the connection must close after."""

    error_code: ErrorCode
    error_message: str | None
    auth_bytes: bytes
    session_lifetime_ms: int = 0
    close: bool = False


@dataclass
class SaslServerAuthenticator:
    mechanisms: tuple[str, ...]
    # A fresh server-side exchange for a mechanism this listener enables.
    new_server: Callable[[str], SaslServer]
    clock: Callable[[], int]
    reauth_ms: int = 0
    state: SaslState = SaslState.HANDSHAKE
    principal: KafkaPrincipal | None = None
    mechanism: str | None = None
    # Handshake v0: SASL tokens follow in bare frames.
    raw_tokens: bool = False
    session_expires_ms: int | None = None
    failed_authentications: int = 0
    failure_reason: str | None = None
    _server: SaslServer | None = field(default=None, repr=False)

    @property
    def authenticated(self) -> bool:
        return self.principal is not None

    def allows(self, api_key: int) -> bool:
        """May a request with ``api_key`` be served now? False means: close the connection."""
        if api_key in (ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE):
            return True
        if self.principal is None:
            return api_key == ApiKey.API_VERSIONS and self.state == SaslState.HANDSHAKE
        return not self.session_expired()

    def session_expired(self) -> bool:
        return self.session_expires_ms is not None and self.clock() >= self.session_expires_ms

    def handshake(self, mechanism: str, version: int) -> tuple[ErrorCode, tuple[str, ...]]:
        """SaslHandshake: choose ``mechanism``. Raises :class:`IllegalSaslStateError` mid-exchange."""
        if self.state not in (SaslState.HANDSHAKE, SaslState.COMPLETE):
            raise IllegalSaslStateError(f"SaslHandshake in state {self.state.value}")
        reauthenticating = self.state == SaslState.COMPLETE
        if reauthenticating and version == 0:
            raise IllegalSaslStateError("re-authentication needs SaslHandshake v1")
        if mechanism not in self.mechanisms or (reauthenticating and mechanism != self.mechanism):
            if not reauthenticating:
                self.state = SaslState.FAILED
            return ErrorCode.UNSUPPORTED_SASL_MECHANISM, self.mechanisms
        self.mechanism = mechanism
        self._server = self.new_server(mechanism)
        self.raw_tokens = version == 0
        self.state = SaslState.AUTHENTICATE
        return ErrorCode.NONE, self.mechanisms

    def authenticate(self, auth_bytes: bytes) -> AuthenticateOutcome:
        """One SaslAuthenticate round (or one raw token after handshake v0)."""
        if self.state != SaslState.AUTHENTICATE or self._server is None:
            raise IllegalSaslStateError(f"SaslAuthenticate in state {self.state.value}")
        server = self._server
        try:
            challenge = server.evaluate(auth_bytes)
        except (PlainAuthenticationError, ScramAuthenticationError, ScramFormatError) as exc:
            return self._fail(str(exc))
        if not server.complete:
            return AuthenticateOutcome(ErrorCode.NONE, None, challenge)
        authenticated = user(server.username or "")
        if self.principal is not None and authenticated != self.principal:
            return self._fail("re-authentication must prove the same principal")
        self.principal = authenticated
        self.state = SaslState.COMPLETE
        self._server = None
        lifetime = self.reauth_ms if self.reauth_ms > 0 else 0
        self.session_expires_ms = self.clock() + lifetime if lifetime else None
        return AuthenticateOutcome(ErrorCode.NONE, None, challenge, session_lifetime_ms=lifetime)

    def _fail(self, reason: str) -> AuthenticateOutcome:
        # The client learns only that its credentials were refused; ``failure_reason`` is for the broker's log.
        self.state = SaslState.FAILED
        self.failed_authentications += 1
        self.failure_reason = reason
        message = (f"Authentication failed during authentication due to invalid credentials with SASL mechanism "
                   f"{self.mechanism}")
        return AuthenticateOutcome(ErrorCode.SASL_AUTHENTICATION_FAILED, message, b"", close=True)

def describe(outcome: AuthenticateOutcome) -> dict[str, Any]:
    """The fields of a SaslAuthenticateResponse."""
    return {"error_code": int(outcome.error_code), "error_message": outcome.error_message,
            "auth_bytes": outcome.auth_bytes, "session_lifetime_ms": outcome.session_lifetime_ms}
