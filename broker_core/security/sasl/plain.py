"""SASL PLAIN (RFC 4616) on the server: one message, ``[authzid] NUL authcid NUL passwd``.

The password is checked by a callback (JAAS ``user_<name>`` options, or the
SCRAM store); an authorization id other than the user's own is refused, as
Kafka refuses it.
"""

from __future__ import annotations

from typing import Callable

PasswordCheck = Callable[[str, str], bool]


class PlainAuthenticationError(Exception):
    """Wrong user name or password, or a malformed PLAIN message."""


class PlainServer:
    def __init__(self, check: PasswordCheck) -> None:
        self._check = check
        self.username: str | None = None
        self.complete = False

    def evaluate(self, response: bytes) -> bytes:
        if self.complete:
            raise PlainAuthenticationError("unexpected PLAIN message after authentication")
        parts = response.split(b"\x00")
        if len(parts) != 3:
            raise PlainAuthenticationError("invalid PLAIN message: expected authzid NUL user NUL password")
        try:
            authzid, username, password = (part.decode("utf-8") for part in parts)
        except UnicodeDecodeError:
            raise PlainAuthenticationError("invalid PLAIN message: not UTF-8") from None
        if not username:
            raise PlainAuthenticationError("PLAIN user name must not be empty")
        if authzid and authzid != username:
            raise PlainAuthenticationError("PLAIN authorization id must be empty or the user name")
        if not self._check(username, password):
            raise PlainAuthenticationError("invalid user name or password")
        self.username = username
        self.complete = True
        return b""
