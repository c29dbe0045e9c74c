"""Kafka's ``sasl.jaas.config`` values: one JAAS login module entry.

::

    org.apache.kafka.common.security.plain.PlainLoginModule required
        username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";

A login module class name, a control flag (required, requisite, sufficient,
optional), ``key=value`` options (values quoted with double quotes, which may
escape ``\\"`` and ``\\\\``, or bare words), and a closing semicolon. PLAIN's
server reads ``user_<name>="<password>"`` options as its users; a broker's own
credentials for inter-broker connections are ``username`` and ``password``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FLAGS = ("required", "requisite", "sufficient", "optional")
PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
USER_PREFIX = "user_"

_TOKEN = re.compile(r'\s*(?:(?P<quoted>"(?:[^"\\]|\\.)*")|(?P<word>[^\s=;"]+)|(?P<punct>[=;]))')


class JaasConfigError(ValueError):
    """The value does not parse as one JAAS login module entry."""


@dataclass(frozen=True)
class JaasEntry:
    login_module: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)

    @property
    def users(self) -> dict[str, str]:
        """PLAIN's ``user_<name>`` options: user name to password."""
        return {key[len(USER_PREFIX):]: value for key, value in self.options.items()
                if key.startswith(USER_PREFIX) and len(key) > len(USER_PREFIX)}

    @property
    def username(self) -> str | None:
        return self.options.get("username")

    @property
    def password(self) -> str | None:
        return self.options.get("password")

    def __repr__(self) -> str:  # never show passwords
        return f"JaasEntry({self.login_module!r}, {self.flag!r}, options={sorted(self.options)!r})"


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise JaasConfigError(f"unexpected character at position {position} of sasl.jaas.config")
        position = match.end()
        if match["quoted"] is not None:
            tokens.append(("value", re.sub(r"\\(.)", r"\1", match["quoted"][1:-1])))
        elif match["word"] is not None:
            tokens.append(("word", match["word"]))
        else:
            tokens.append(("punct", match["punct"]))
    return tokens


def parse_jaas_config(text: str) -> JaasEntry:
    """Parse one entry; raises :class:`JaasConfigError` saying what is missing (never echoing values)."""
    tokens = _tokens(text)
    if len(tokens) < 3 or tokens[0][0] != "word" or tokens[1][0] != "word":
        raise JaasConfigError("sasl.jaas.config must start with a login module class name and a control flag")
    module, flag = tokens[0][1], tokens[1][1]
    if flag not in FLAGS:
        raise JaasConfigError(f"sasl.jaas.config control flag {flag!r} is not one of {', '.join(FLAGS)}")
    if tokens[-1] != ("punct", ";"):
        raise JaasConfigError("sasl.jaas.config must end with ';'")
    options: dict[str, str] = {}
    body = tokens[2:-1]
    if len(body) % 3:
        raise JaasConfigError("sasl.jaas.config options must be key=value pairs")
    for index in range(0, len(body), 3):
        key, equals, value = body[index:index + 3]
        if key[0] != "word" or equals != ("punct", "=") or value[0] == "punct":
            raise JaasConfigError(f"sasl.jaas.config option near {key[1]!r} is not key=value")
        options[key[1]] = value[1]
    return JaasEntry(module, flag, options)
