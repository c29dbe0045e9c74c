"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677): credentials and the server side of the exchange.

A stored credential never holds the password: only the salt, the iteration
count and two keys derived from ``SaltedPassword = Hi(password, salt, i)``::

    StoredKey = H(HMAC(SaltedPassword, "Client Key"))
    ServerKey = HMAC(SaltedPassword, "Server Key")

Kafka's text form of a credential (the value under the mechanism's name in
``/config/users/<user>``) is
``salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>``.

The exchange, two rounds::

    client-first  n,,n=<user>,r=<client nonce>
    server-first  r=<client nonce><server nonce>,s=<b64 salt>,i=<iterations>
    client-final  c=<b64 gs2 header>,r=<both nonces>,p=<b64 ClientProof>
    server-final  v=<b64 ServerSignature>

The server checks the proof by recovering ``ClientKey = ClientProof XOR
HMAC(StoredKey, AuthMessage)`` and comparing ``H(ClientKey)`` with the stored
key in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Callable

MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384  # Kafka's bound on AlterUserScramCredentials
SALT_BYTES = 32


@dataclass(frozen=True)
class ScramMechanism:
    name: str
    hash_name: str
    # Kafka's numbering in AlterUserScramCredentials / DescribeUserScramCredentials.
    type_id: int

    def h(self, data: bytes) -> bytes:
        return hashlib.new(self.hash_name, data).digest()

    def hmac(self, key: bytes, data: bytes) -> bytes:
        return hmac.new(key, data, self.hash_name).digest()

    def salted_password(self, password: bytes, salt: bytes, iterations: int) -> bytes:
        return hashlib.pbkdf2_hmac(self.hash_name, password, salt, iterations)


SCRAM_SHA_256 = ScramMechanism("SCRAM-SHA-256", "sha256", 1)
SCRAM_SHA_512 = ScramMechanism("SCRAM-SHA-512", "sha512", 2)
MECHANISMS = {m.name: m for m in (SCRAM_SHA_256, SCRAM_SHA_512)}
MECHANISMS_BY_TYPE = {m.type_id: m for m in (SCRAM_SHA_256, SCRAM_SHA_512)}


class ScramFormatError(ValueError):
    """A stored credential or a SCRAM message does not parse."""


@dataclass(frozen=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    @classmethod
    def from_salted_password(cls, mechanism: ScramMechanism, salted: bytes, salt: bytes,
                             iterations: int) -> ScramCredential:
        client_key = mechanism.hmac(salted, b"Client Key")
        return cls(salt, mechanism.h(client_key), mechanism.hmac(salted, b"Server Key"), iterations)

    @classmethod
    def from_password(cls, mechanism: ScramMechanism, password: str, *, iterations: int = MIN_ITERATIONS,
                      salt: bytes | None = None) -> ScramCredential:
        salt = salt if salt is not None else secrets.token_bytes(SALT_BYTES)
        salted = mechanism.salted_password(password.encode(), salt, iterations)
        return cls.from_salted_password(mechanism, salted, salt, iterations)

    def to_text(self) -> str:
        b64 = _b64
        return (f"salt={b64(self.salt)},stored_key={b64(self.stored_key)},server_key={b64(self.server_key)},"
                f"iterations={self.iterations}")

    @classmethod
    def from_text(cls, text: str) -> ScramCredential:
        fields = dict(part.split("=", 1) for part in text.split(",") if "=" in part)
        try:
            return cls(_unb64(fields["salt"]), _unb64(fields["stored_key"]), _unb64(fields["server_key"]),
                       int(fields["iterations"]))
        except (KeyError, ValueError) as exc:
            raise ScramFormatError(f"stored SCRAM credential does not parse ({exc})") from None

    def matches_password(self, mechanism: ScramMechanism, password: str) -> bool:
        """PLAIN against the SCRAM store: derive the stored key from ``password`` and compare in constant time."""
        salted = mechanism.salted_password(password.encode(), self.salt, self.iterations)
        return hmac.compare_digest(mechanism.h(mechanism.hmac(salted, b"Client Key")), self.stored_key)

    def __repr__(self) -> str:
        return f"ScramCredential(iterations={self.iterations})"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


def parse_attributes(message: str) -> dict[str, str]:
    """``a=1,b=2`` to a dict; the value keeps any ``=`` it contains."""
    result: dict[str, str] = {}
    for part in message.split(","):
        key, sep, value = part.partition("=")
        if not sep or len(key) != 1:
            raise ScramFormatError(f"invalid SCRAM attribute {part[:40]!r}")
        result[key] = value
    return result


def decode_username(saslname: str) -> str:
    if "=" in saslname.replace("=2C", "").replace("=3D", ""):
        raise ScramFormatError("invalid escape in SCRAM user name")
    return saslname.replace("=2C", ",").replace("=3D", "=")


def encode_username(name: str) -> str:
    return name.replace("=", "=3D").replace(",", "=2C")


class ScramAuthenticationError(Exception):
    """The client failed to prove it knows the password (or named an unknown user)."""


CredentialLookup = Callable[[str, ScramMechanism], "ScramCredential | None"]


class ScramServer:
    """One server-side exchange: :meth:`evaluate` takes each client message and returns the reply.

    ``nonce`` makes the server nonce (tests pass a fixed one). :attr:`complete`
    turns true once the client's proof checked out; :attr:`username` is the
    authenticated user then.
    """

    def __init__(self, mechanism: ScramMechanism, lookup: CredentialLookup, *,
                 nonce: Callable[[], str] = lambda: secrets.token_urlsafe(24)) -> None:
        self.mechanism = mechanism
        self._lookup = lookup
        self._nonce = nonce
        self._state = "first"
        self.username: str | None = None
        self.complete = False
        self._gs2_header = ""
        self._client_first_bare = ""
        self._server_first = ""
        self._credential: ScramCredential | None = None

    def evaluate(self, response: bytes) -> bytes:
        try:
            text = response.decode("utf-8")
        except UnicodeDecodeError:
            raise ScramFormatError("SCRAM message is not UTF-8") from None
        if self._state == "first":
            return self._client_first(text)
        if self._state == "final":
            return self._client_final(text)
        raise ScramFormatError("unexpected SCRAM message after the exchange completed")

    def _client_first(self, text: str) -> bytes:
        # gs2-header: "n" or "y" (no channel binding), then an optional authzid, then the bare message.
        flag, _, rest = text.partition(",")
        authzid, _, bare = rest.partition(",")
        if flag not in ("n", "y") or (authzid and not authzid.startswith("a=")):
            raise ScramFormatError("invalid SCRAM gs2 header; channel binding is not supported")
        attributes = parse_attributes(bare)
        if "n" not in attributes or "r" not in attributes or not attributes["r"]:
            raise ScramFormatError("SCRAM client-first message needs n= and r=")
        extensions = set(attributes) - {"n", "r"}
        if extensions:
            raise ScramAuthenticationError(f"unsupported SCRAM extensions {sorted(extensions)}")
        self.username = decode_username(attributes["n"])
        if authzid and decode_username(authzid[2:]) != self.username:
            raise ScramAuthenticationError("authorization id differs from the user name")
        credential = self._lookup(self.username, self.mechanism)
        if credential is None:
            raise ScramAuthenticationError("unknown user")
        self._credential = credential
        self._gs2_header = f"{flag},{authzid},"
        self._client_first_bare = bare
        nonce = attributes["r"] + self._nonce()
        self._server_first = f"r={nonce},s={_b64(credential.salt)},i={credential.iterations}"
        self._state = "final"
        return self._server_first.encode()

    def _client_final(self, text: str) -> bytes:
        without_proof, sep, proof_part = text.rpartition(",p=")
        if not sep:
            raise ScramFormatError("SCRAM client-final message has no proof")
        attributes = parse_attributes(without_proof)
        expected_nonce = parse_attributes(self._server_first)["r"]
        # Kafka accepts a nonce that ends with the expected one: librdkafka before 2.1 sends the client nonce
        # twice. The proof still covers the message as the client sent it.
        if not attributes.get("r", "").endswith(expected_nonce):
            raise ScramAuthenticationError("nonce mismatch")
        if attributes.get("c") != _b64(self._gs2_header.encode()):
            raise ScramAuthenticationError("channel binding mismatch")
        try:
            proof = _unb64(proof_part)
        except ValueError:
            raise ScramFormatError("SCRAM client proof is not base64") from None
        credential, mechanism = self._credential, self.mechanism
        assert credential is not None
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        client_signature = mechanism.hmac(credential.stored_key, auth_message)
        if len(proof) != len(client_signature):
            raise ScramAuthenticationError("invalid client proof")
        client_key = bytes(a ^ b for a, b in zip(proof, client_signature))
        self._state = "done"
        if not hmac.compare_digest(mechanism.h(client_key), credential.stored_key):
            raise ScramAuthenticationError("invalid client proof")
        self.complete = True
        return f"v={_b64(mechanism.hmac(credential.server_key, auth_message))}".encode()
