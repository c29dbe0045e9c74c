"""Who a connection is: Kafka's ``KafkaPrincipal`` and the TLS subject mapping rules.

A principal is a type and a name (``User:alice``). Connections that have not
authenticated (PLAINTEXT, or TLS without a client certificate) are
``User:ANONYMOUS``, as in Kafka.

``ssl.principal.mapping.rules`` turns a client certificate's subject (an RFC
2253 distinguished name, most specific part first:
``CN=alice,OU=eng,O=Example,C=US``) into a user name. Rules are tried in
order and the first whose pattern matches the whole name wins:

* ``RULE:pattern/replacement/`` -- replace (``$1`` names a group), optionally
  followed by ``L`` or ``U`` to lower- or upper-case the result;
* ``DEFAULT`` -- the distinguished name unchanged.

A name no rule matches is refused (:class:`NoMatchingRuleError`), as Kafka
refuses it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

USER_TYPE = "User"


@dataclass(frozen=True)
class KafkaPrincipal:
    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"


ANONYMOUS = KafkaPrincipal(USER_TYPE, "ANONYMOUS")


def user(name: str) -> KafkaPrincipal:
    return KafkaPrincipal(USER_TYPE, name)


class InvalidMappingRuleError(ValueError):
    """``ssl.principal.mapping.rules`` does not parse."""


class NoMatchingRuleError(ValueError):
    """No rule maps a certificate subject to a principal name."""


# One rule, then an optional comma: a pattern and a replacement may hold escaped slashes and commas.
_RULE = re.compile(
    r"\s*(?:(?P<default>DEFAULT)|RULE:(?P<pattern>(?:[^/\\]|\\.)*)/(?P<replacement>(?:[^/\\]|\\.)*)/(?P<case>[LU])?)"
    r"\s*(?:,|$)"
)
_JAVA_GROUP = re.compile(r"\$(\d+)")


@dataclass(frozen=True)
class MappingRule:
    """``DEFAULT`` when ``pattern`` is None."""

    pattern: re.Pattern[str] | None = None
    replacement: str = ""
    case: str | None = None

    def apply(self, distinguished_name: str) -> str | None:
        if self.pattern is None:
            return distinguished_name
        if self.pattern.fullmatch(distinguished_name) is None:
            return None
        result = self.pattern.sub(self.replacement, distinguished_name)
        if self.case == "L":
            return result.lower()
        if self.case == "U":
            return result.upper()
        return result


def parse_mapping_rules(text: str) -> tuple[MappingRule, ...]:
    """Parse Kafka's rule syntax; raises :class:`InvalidMappingRuleError` naming the part that is wrong."""
    text = text.strip()
    rules: list[MappingRule] = []
    position = 0
    while position < len(text):
        match = _RULE.match(text, position)
        if match is None or match.end() == position:
            raise InvalidMappingRuleError(f"invalid rule at {text[position:]!r}: expected DEFAULT or "
                                          "RULE:pattern/replacement/[LU]")
        position = match.end()
        if match["default"]:
            rules.append(MappingRule())
            continue
        try:
            pattern = re.compile(match["pattern"])
        except re.error as exc:
            raise InvalidMappingRuleError(f"invalid pattern {match['pattern']!r}: {exc}") from None
        replacement = _JAVA_GROUP.sub(r"\\g<\1>", match["replacement"].replace("\\/", "/"))
        rules.append(MappingRule(pattern, replacement, match["case"]))
    if not rules:
        raise InvalidMappingRuleError("no rules: use DEFAULT to keep the subject as it is")
    return tuple(rules)


@dataclass(frozen=True)
class SslPrincipalMapper:
    rules: tuple[MappingRule, ...]

    @classmethod
    def from_rules(cls, text: str) -> SslPrincipalMapper:
        return cls(parse_mapping_rules(text))

    def name(self, distinguished_name: str) -> str:
        for rule in self.rules:
            result = rule.apply(distinguished_name)
            if result is not None:
                return result
        raise NoMatchingRuleError(f"no ssl.principal.mapping.rules rule matches {distinguished_name!r}")


def distinguished_name(subject: tuple[tuple[tuple[str, str], ...], ...]) -> str:
    """RFC 2253 text of a subject as :meth:`ssl.SSLSocket.getpeercert` gives it (most specific part first)."""
    short = {"commonName": "CN", "organizationalUnitName": "OU", "organizationName": "O", "localityName": "L",
             "stateOrProvinceName": "ST", "countryName": "C", "domainComponent": "DC", "userId": "UID",
             "streetAddress": "STREET"}
    parts = []
    for rdn in reversed(subject):
        parts.append("+".join(f"{short.get(key, key)}={_escape(value)}" for key, value in rdn))
    return ",".join(parts)


def _escape(value: str) -> str:
    escaped = re.sub(r'([,+"\\<>;=])', r"\\\1", value)
    if escaped.startswith((" ", "#")):
        escaped = "\\" + escaped
    if escaped.endswith(" ") and not escaped.endswith("\\ "):
        escaped = escaped[:-1] + "\\ "
    return escaped
