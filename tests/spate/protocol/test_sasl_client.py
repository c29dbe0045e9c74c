"""The SASL client mechanisms: RFC 7677's exchange byte for byte, PLAIN, and a forged server refused."""

from __future__ import annotations

import pytest

from spate.protocol.sasl import SaslClient, SaslClientError

CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
CLIENT_FINAL = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def rfc_client() -> SaslClient:
    return SaslClient("SCRAM-SHA-256", "user", "pencil", nonce=lambda: "rOprNGfwEbeRWgbNEkqO")


def test_scram_sha_256_follows_rfc_7677() -> None:
    client = rfc_client()
    assert client.first() == CLIENT_FIRST
    assert client.respond(SERVER_FIRST) == CLIENT_FINAL
    assert client.respond(SERVER_FINAL) is None and client.complete


def test_a_wrong_server_signature_is_refused() -> None:
    client = rfc_client()
    client.first()
    client.respond(SERVER_FIRST)
    with pytest.raises(SaslClientError, match="signature"):
        client.respond(b"v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
    assert not client.complete


def test_a_server_nonce_not_extending_ours_is_refused() -> None:
    client = rfc_client()
    client.first()
    with pytest.raises(SaslClientError):
        client.respond(b"r=other,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")


def test_plain_sends_one_message() -> None:
    client = SaslClient("PLAIN", "alice", "secret")
    assert client.first() == b"\0alice\0secret"
    assert client.respond(b"") is None and client.complete


def test_an_unknown_mechanism_is_refused() -> None:
    with pytest.raises(ValueError, match="GSSAPI"):
        SaslClient("GSSAPI", "a", "b")
