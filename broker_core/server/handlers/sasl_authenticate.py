"""SaslAuthenticate (KIP-152): one round of the SASL exchange in a Kafka frame.

On a SASL listener the connection answers it (:mod:`broker_core.server.sasl_gate`);
elsewhere :func:`handle` answers ILLEGAL_SASL_STATE, as Kafka does. v1 adds
``session_lifetime_ms`` (KIP-368); v2 is flexible.
"""

from __future__ import annotations

from typing import Any

from broker_core.security.sasl.authenticator import AuthenticateOutcome
from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.sasl_authenticate import SaslAuthenticateResponse


def handle(ctx: BrokerContext, request: Request) -> Any:
    return SaslAuthenticateResponse(error_code=int(ErrorCode.ILLEGAL_SASL_STATE),
                                    error_message="SASL authentication is not enabled on this listener",
                                    auth_bytes=b"", session_lifetime_ms=0)


def response(outcome: AuthenticateOutcome) -> Any:
    return SaslAuthenticateResponse(error_code=int(outcome.error_code), error_message=outcome.error_message,
                                    auth_bytes=outcome.auth_bytes, session_lifetime_ms=outcome.session_lifetime_ms)
