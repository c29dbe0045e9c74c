"""The SASL gate of one connection on a SASL listener: it answers SaslHandshake and SaslAuthenticate
itself and decides what else may pass.

Before authentication only ApiVersions and the SASL requests pass; anything
else closes the connection, as Kafka does. A failed authentication is
answered (SASL_AUTHENTICATION_FAILED with a message), counted, logged without
credentials, and held back ``connection.failed.authentication.delay.ms``
(100 ms) to slow password guessing; the connection closes once the answer is
sent. After a
SaslHandshake v0 the client sends raw SASL tokens in bare frames
(:meth:`SaslGate.answer_token`). After ``connections.max.reauth.ms`` without
re-authentication, the next other request closes the connection. Until
authenticated, a frame above ``sasl.server.max.receive.size`` (512 KiB)
closes the connection, so an unauthenticated client cannot make the broker
take a large request.

Credential lookups may block (ZooKeeper, PBKDF2 for PLAIN against SCRAM
credentials), so each exchange step runs in a worker thread; the connection's
reader waits for it, so one connection's steps never overlap.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from dataclasses import dataclass

from broker_core.security.listener_security import AuthenticationCounters
from broker_core.security.principal import KafkaPrincipal
from broker_core.security.sasl.authenticator import (
    PRE_AUTHENTICATION_APIS,
    IllegalSaslStateError,
    SaslServerAuthenticator,
    SaslState,
)
from broker_core.server.handlers import sasl_authenticate, sasl_handshake
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import Request, encode_response
from spate.protocol.errors import ErrorCode

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GateReply:
    """Bytes to send (possibly none), and whether to close the connection after them."""

    data: bytes
    close: bool = False


class SaslGate:
    def __init__(self, authenticator: SaslServerAuthenticator, counters: AuthenticationCounters, peer: str,
                 listener_name: str, failed_delay_ms: int = 0, max_receive_size: int = 524288) -> None:
        self._failed_delay_s = failed_delay_ms / 1000
        # sasl.server.max.receive.size: the largest frame the connection takes before authentication.
        self.max_receive_size = max_receive_size
        self.authenticator = authenticator
        self._counters = counters
        self._peer = peer
        self._listener = listener_name

    @property
    def principal(self) -> KafkaPrincipal | None:
        return self.authenticator.principal

    @property
    def expects_raw_token(self) -> bool:
        auth = self.authenticator
        return auth.raw_tokens and auth.state == SaslState.AUTHENTICATE

    def refusal(self, request: Request) -> str | None:
        """Why ``request`` must close the connection instead of being served; None lets it through."""
        if request.api_key in (ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE) or \
                self.authenticator.allows(request.api_key):
            return None
        if self.authenticator.principal is None:
            allowed = ", ".join(sorted(ApiKey(k).name for k in PRE_AUTHENTICATION_APIS))
            return f"{request.api_key.name} before SASL authentication (only {allowed} are allowed)"
        return f"{request.api_key.name} after the SASL session expired (connections.max.reauth.ms)"

    async def answer(self, request: Request) -> GateReply:
        """The reply to a SaslHandshake or SaslAuthenticate request."""
        auth, header = self.authenticator, request.header
        try:
            if request.api_key == ApiKey.SASL_HANDSHAKE:
                body = sasl_handshake.answer(auth, request)
                close = body.error_code != ErrorCode.NONE and auth.state == SaslState.FAILED
            else:
                outcome = await asyncio.to_thread(auth.authenticate, request.body.auth_bytes)
                await self._record(outcome.error_code)
                body, close = sasl_authenticate.response(outcome), outcome.close
        except IllegalSaslStateError as exc:
            # Kafka answers ILLEGAL_SASL_STATE, then closes.
            logger.info("closing %s on listener %s: %s", self._peer, self._listener, exc)
            body, close = sasl_handshake.illegal_state(request, str(exc)), True
        return GateReply(encode_response(header.correlation_id, request.api_key, request.api_version, body), close)

    async def answer_token(self, token: bytes) -> GateReply:
        """After SaslHandshake v0: a raw token in, a raw (size-prefixed) challenge out; a failure just closes."""
        outcome = await asyncio.to_thread(self.authenticator.authenticate, token)
        await self._record(outcome.error_code)
        if outcome.close:
            return GateReply(b"", close=True)
        return GateReply(struct.pack(">i", len(outcome.auth_bytes)) + outcome.auth_bytes)

    async def _record(self, error: ErrorCode) -> None:
        auth = self.authenticator
        if error == ErrorCode.NONE:
            if auth.state == SaslState.COMPLETE:
                self._counters.record(self._listener, success=True)
                logger.debug("%s authenticated as %s with %s on listener %s", self._peer, auth.principal,
                             auth.mechanism, self._listener)
            return
        self._counters.record(self._listener, success=False)
        logger.info("failed authentication from %s with %s on listener %s: %s", self._peer, auth.mechanism,
                    self._listener, auth.failure_reason)
        # connection.failed.authentication.delay.ms: the answer, and the close, come late.
        await asyncio.sleep(self._failed_delay_s)
