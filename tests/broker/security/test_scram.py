"""SCRAM-SHA-256/512 on the server, checked against RFC 7677's exchange."""

from __future__ import annotations

import base64

import pytest

from broker_core.security.sasl.scram import (
    SCRAM_SHA_256,
    SCRAM_SHA_512,
    ScramAuthenticationError,
    ScramCredential,
    ScramFormatError,
    ScramServer,
    decode_username,
    encode_username,
)

# RFC 7677 section 3.
SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
CLIENT_FINAL = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def rfc_server(password: str = "pencil") -> ScramServer:
    credential = ScramCredential.from_password(SCRAM_SHA_256, password, iterations=4096, salt=SALT)
    return ScramServer(SCRAM_SHA_256, lambda name, mechanism: credential if name == "user" else None,
                       nonce=lambda: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")


def test_the_server_answers_rfc_7677_byte_for_byte() -> None:
    server = rfc_server()
    assert server.evaluate(CLIENT_FIRST) == SERVER_FIRST
    assert not server.complete
    assert server.evaluate(CLIENT_FINAL) == SERVER_FINAL
    assert server.complete and server.username == "user"


def test_a_proof_from_a_different_password_is_refused() -> None:
    server = rfc_server(password="not-pencil")
    server.evaluate(CLIENT_FIRST)
    with pytest.raises(ScramAuthenticationError, match="proof"):
        server.evaluate(CLIENT_FINAL)
    assert not server.complete


def test_an_unknown_user_is_refused_at_the_first_message() -> None:
    with pytest.raises(ScramAuthenticationError, match="unknown user"):
        rfc_server().evaluate(b"n,,n=mallory,r=abc")


def test_a_final_message_with_another_nonce_is_refused() -> None:
    server = rfc_server()
    server.evaluate(CLIENT_FIRST)
    with pytest.raises(ScramAuthenticationError, match="nonce"):
        server.evaluate(CLIENT_FINAL.replace(b"hNlF$k0", b"hNlF$k1"))


def test_channel_binding_must_echo_the_gs2_header() -> None:
    server = rfc_server()
    server.evaluate(CLIENT_FIRST)
    with pytest.raises(ScramAuthenticationError, match="channel binding"):
        server.evaluate(CLIENT_FINAL.replace(b"c=biws", b"c=eSws"))


@pytest.mark.parametrize("message", [b"p=tls-unique,,n=user,r=x", b"n,,r=x", b"n,,n=user", b"\xff\xfe"])
def test_malformed_first_messages_are_format_errors(message: bytes) -> None:
    with pytest.raises(ScramFormatError):
        rfc_server().evaluate(message)


def test_extensions_such_as_delegation_tokens_are_refused() -> None:
    with pytest.raises(ScramAuthenticationError, match="extensions"):
        rfc_server().evaluate(b"n,,n=user,r=abc,t=tokenauth")


def test_credentials_round_trip_through_kafkas_text_form() -> None:
    credential = ScramCredential.from_password(SCRAM_SHA_512, "secret", iterations=8192)
    text = credential.to_text()
    assert text.startswith("salt=") and ",stored_key=" in text and text.endswith(",iterations=8192")
    assert ScramCredential.from_text(text) == credential
    assert "secret" not in repr(credential)


def test_a_stored_credential_checks_a_plain_password() -> None:
    credential = ScramCredential.from_password(SCRAM_SHA_512, "secret")
    assert credential.matches_password(SCRAM_SHA_512, "secret")
    assert not credential.matches_password(SCRAM_SHA_512, "Secret")


def test_a_broken_stored_credential_is_a_format_error() -> None:
    with pytest.raises(ScramFormatError):
        ScramCredential.from_text("salt=abc,iterations=4096")


def test_user_names_escape_comma_and_equals() -> None:
    assert encode_username("a,b=c") == "a=2Cb=3Dc"
    assert decode_username("a=2Cb=3Dc") == "a,b=c"
    with pytest.raises(ScramFormatError):
        decode_username("a=2Db")


def test_a_final_nonce_that_repeats_the_client_nonce_is_accepted_as_kafka_does() -> None:
    # librdkafka before 2.1 sends client nonce + the combined nonce; Kafka checks only that it ends with the latter.
    server = rfc_server()
    server.evaluate(CLIENT_FIRST)
    final = CLIENT_FINAL.replace(b"r=rOprNGfwEbeRWgbNEkqO%", b"r=rOprNGfwEbeRWgbNEkqOrOprNGfwEbeRWgbNEkqO%")
    with pytest.raises(ScramAuthenticationError, match="proof"):  # the proof was computed over the RFC message
        server.evaluate(final)
