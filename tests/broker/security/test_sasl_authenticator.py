"""The per-connection SASL state machine: what each state allows, failures, sessions and re-authentication."""

from __future__ import annotations

import pytest

from broker_core.security.principal import user
from broker_core.security.sasl.authenticator import IllegalSaslStateError, SaslServerAuthenticator, SaslState
from broker_core.security.sasl.plain import PlainServer
from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode

USERS = {"alice": "alice-secret", "bob": "bob-secret"}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000

    def __call__(self) -> int:
        return self.now


def authenticator(clock: Clock | None = None, reauth_ms: int = 0) -> SaslServerAuthenticator:
    return SaslServerAuthenticator(
        mechanisms=("PLAIN",),
        new_server=lambda mechanism: PlainServer(lambda name, password: USERS.get(name) == password),
        clock=clock or Clock(), reauth_ms=reauth_ms,
    )


def test_before_authentication_only_api_versions_and_sasl_are_allowed() -> None:
    auth = authenticator()
    assert auth.allows(ApiKey.API_VERSIONS) and auth.allows(ApiKey.SASL_HANDSHAKE)
    assert not auth.allows(ApiKey.METADATA) and not auth.allows(ApiKey.PRODUCE)


def test_plain_login_sets_the_principal_and_opens_every_api() -> None:
    auth = authenticator()
    assert auth.handshake("PLAIN", 1) == (ErrorCode.NONE, ("PLAIN",))
    assert not auth.allows(ApiKey.API_VERSIONS)  # only SASL frames mid-exchange
    outcome = auth.authenticate(b"\x00alice\x00alice-secret")
    assert outcome.error_code == ErrorCode.NONE and not outcome.close
    assert auth.principal == user("alice") and auth.state == SaslState.COMPLETE
    assert auth.allows(ApiKey.METADATA)


def test_an_unknown_mechanism_is_answered_with_the_enabled_ones() -> None:
    auth = authenticator()
    assert auth.handshake("GSSAPI", 1) == (ErrorCode.UNSUPPORTED_SASL_MECHANISM, ("PLAIN",))
    assert auth.state == SaslState.FAILED


def test_a_wrong_password_fails_closes_and_counts() -> None:
    auth = authenticator()
    auth.handshake("PLAIN", 1)
    outcome = auth.authenticate(b"\x00alice\x00wrong")
    assert outcome.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED and outcome.close
    assert "PLAIN" in (outcome.error_message or "") and "wrong" not in (outcome.error_message or "")
    assert auth.principal is None and auth.failed_authentications == 1
    assert not auth.allows(ApiKey.METADATA)


def test_authenticate_before_handshake_is_an_illegal_state() -> None:
    with pytest.raises(IllegalSaslStateError):
        authenticator().authenticate(b"\x00alice\x00alice-secret")


def test_a_session_expires_after_connections_max_reauth_ms() -> None:
    clock = Clock()
    auth = authenticator(clock, reauth_ms=5_000)
    auth.handshake("PLAIN", 1)
    assert auth.authenticate(b"\x00alice\x00alice-secret").session_lifetime_ms == 5_000
    clock.now += 4_999
    assert auth.allows(ApiKey.FETCH)
    clock.now += 1
    assert not auth.allows(ApiKey.FETCH) and auth.allows(ApiKey.SASL_HANDSHAKE)


def test_re_authentication_renews_the_session_for_the_same_principal() -> None:
    clock = Clock()
    auth = authenticator(clock, reauth_ms=5_000)
    auth.handshake("PLAIN", 1)
    auth.authenticate(b"\x00alice\x00alice-secret")
    clock.now += 6_000
    assert auth.handshake("PLAIN", 1)[0] == ErrorCode.NONE
    assert auth.authenticate(b"\x00alice\x00alice-secret").error_code == ErrorCode.NONE
    assert auth.allows(ApiKey.FETCH) and auth.session_expires_ms == clock.now + 5_000


def test_re_authentication_as_someone_else_fails() -> None:
    auth = authenticator(reauth_ms=5_000)
    auth.handshake("PLAIN", 1)
    auth.authenticate(b"\x00alice\x00alice-secret")
    auth.handshake("PLAIN", 1)
    outcome = auth.authenticate(b"\x00bob\x00bob-secret")
    assert outcome.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED and outcome.close


def test_plain_refuses_an_authorization_id_of_someone_else() -> None:
    auth = authenticator()
    auth.handshake("PLAIN", 1)
    assert auth.authenticate(b"bob\x00alice\x00alice-secret").error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
