"""The client side of SASL PLAIN and SCRAM-SHA-256/512 (RFC 4616, 5802, 7677), without sockets.

Shared by the Python client and by brokers' own connections to each other.
A mechanism is driven by :class:`SaslClient`: :meth:`~SaslClient.first`
gives the first message, :meth:`~SaslClient.respond` turns each server
challenge into the next message, and :attr:`~SaslClient.complete` is set
once the server proved itself (SCRAM's server signature, checked in constant
time). Carried in SaslAuthenticate requests after a SaslHandshake v1.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Callable

SCRAM_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
MECHANISMS = ("PLAIN", *SCRAM_HASHES)


class SaslClientError(Exception):
    """The server's challenge is malformed or its signature is wrong."""


class SaslClient:
    def __init__(self, mechanism: str, username: str, password: str, *,
                 nonce: Callable[[], str] = lambda: secrets.token_urlsafe(24)) -> None:
        if mechanism not in MECHANISMS:
            raise ValueError(f"unsupported SASL mechanism {mechanism!r}; use one of {', '.join(MECHANISMS)}")
        self.mechanism = mechanism
        self._username, self._password = username, password
        self._nonce = nonce()
        self.complete = False
        self._client_first_bare = ""
        self._expected_signature = b""

    def first(self) -> bytes:
        if self.mechanism == "PLAIN":
            return f"\0{self._username}\0{self._password}".encode()
        name = self._username.replace("=", "=3D").replace(",", "=2C")
        self._client_first_bare = f"n={name},r={self._nonce}"
        return f"n,,{self._client_first_bare}".encode()

    def respond(self, challenge: bytes) -> bytes | None:
        """The next message, or None when the exchange is over (``complete`` then says whether it succeeded)."""
        if self.mechanism == "PLAIN" or self.complete:
            self.complete = True
            return None
        text = challenge.decode("utf-8", "replace")
        if self._expected_signature:
            return self._verify(text)
        return self._client_final(text)

    def _client_final(self, server_first: str) -> bytes:
        attributes = dict(part.split("=", 1) for part in server_first.split(",") if "=" in part)
        nonce, salt, iterations = attributes.get("r", ""), attributes.get("s"), attributes.get("i", "")
        if not nonce.startswith(self._nonce) or salt is None or not iterations.isdigit():
            raise SaslClientError("invalid SCRAM server-first message")
        hash_name = SCRAM_HASHES[self.mechanism]
        salted = hashlib.pbkdf2_hmac(hash_name, self._password.encode(), base64.b64decode(salt), int(iterations))
        client_key = hmac.new(salted, b"Client Key", hash_name).digest()
        stored_key = hashlib.new(hash_name, client_key).digest()
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self._client_first_bare},{server_first},{without_proof}".encode()
        signature = hmac.new(stored_key, auth_message, hash_name).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature))
        server_key = hmac.new(salted, b"Server Key", hash_name).digest()
        self._expected_signature = hmac.new(server_key, auth_message, hash_name).digest()
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def _verify(self, server_final: str) -> None:
        if not server_final.startswith("v="):
            raise SaslClientError(f"SCRAM server refused the proof: {server_final[:80]}")
        if not hmac.compare_digest(base64.b64decode(server_final[2:]), self._expected_signature):
            raise SaslClientError("SCRAM server signature does not match: not the server that holds the credential")
        self.complete = True
        return None
