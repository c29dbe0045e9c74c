"""A JAAS login configuration file, as Java reads ``java.security.auth.login.config``.

::

    // The broker's login to ZooKeeper.
    Client {
        org.apache.zookeeper.server.auth.DigestLoginModule required
            username="kafka"
            password="kafka-secret";
    };

The file holds named sections; each section holds one or more login module
entries (a class name, a control flag, ``key=value`` options and a ``;``) in
braces, and ends with ``};``. Comments are ``// ...`` and ``/* ... */``.
Values are double-quoted (``\\"`` and ``\\\\`` escape) or bare words.

Errors never repeat option values: the file holds passwords.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from broker_core.security.sasl.jaas import FLAGS, JaasEntry

_TOKEN = re.compile(
    r'(?P<space>\s+|//[^\n]*|/\*.*?\*/)'
    r'|(?P<quoted>"(?:[^"\\]|\\.)*")'
    r'|(?P<word>[^\s=;{}"]+)'
    r'|(?P<punct>[=;{}])',
    re.DOTALL,
)


class JaasFileError(ValueError):
    """The file cannot be read or does not parse; the message names the file and what is wrong."""


@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "value" (a quoted string) or "punct"
    text: str
    line: int


@dataclass(frozen=True)
class JaasFile:
    """The sections of one JAAS file, by name."""

    path: Path
    sections: dict[str, tuple[JaasEntry, ...]]

    def section(self, name: str) -> tuple[JaasEntry, ...] | None:
        return self.sections.get(name)


def read_jaas_file(path: Path) -> JaasFile:
    """Read and parse ``path``; :class:`JaasFileError` if it is missing, unreadable or malformed."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise JaasFileError(f"JAAS file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise JaasFileError(f"cannot read JAAS file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    return JaasFile(path, parse_jaas_sections(text, where=str(path)))


def parse_jaas_sections(text: str, *, where: str = "JAAS file") -> dict[str, tuple[JaasEntry, ...]]:
    """Parse a whole file's text into ``{section name: entries}``."""
    tokens = _tokenize(text, where)
    sections: dict[str, tuple[JaasEntry, ...]] = {}
    position = 0
    while position < len(tokens):
        name = tokens[position]
        if name.kind != "word" or not _is(tokens, position + 1, "{"):
            raise JaasFileError(f"{where}, line {name.line}: expected a section name followed by '{{'")
        entries, position = _parse_entries(tokens, position + 2, where, name.text)
        if not _is(tokens, position, ";"):
            raise JaasFileError(f"{where}: section {name.text} must end with '}};'")
        if name.text in sections:
            raise JaasFileError(f"{where}: section {name.text} appears twice")
        sections[name.text] = entries
        position += 1
    return sections


def _parse_entries(tokens: list[_Token], position: int, where: str, section: str) -> tuple[tuple[JaasEntry, ...], int]:
    """Entries up to the section's closing brace; returns them and the position after the brace."""
    entries: list[JaasEntry] = []
    while not _is(tokens, position, "}"):
        if position + 1 >= len(tokens) or tokens[position].kind != "word" or tokens[position + 1].kind != "word":
            raise JaasFileError(f"{where}: section {section}: expected a login module class name and a control flag")
        module, flag = tokens[position].text, tokens[position + 1].text
        if flag not in FLAGS:
            raise JaasFileError(f"{where}: section {section}: control flag {flag!r} is not one of {', '.join(FLAGS)}")
        position += 2
        options: dict[str, str] = {}
        while not _is(tokens, position, ";"):
            key = tokens[position] if position < len(tokens) else None
            if key is None or key.kind != "word" or not _is(tokens, position + 1, "="):
                raise JaasFileError(f"{where}: section {section}: options of {module} must be key=value, ending ';'")
            value = tokens[position + 2] if position + 2 < len(tokens) else None
            if value is None or value.kind == "punct":
                raise JaasFileError(f"{where}: section {section}: option {key.text} has no value")
            options[key.text] = value.text
            position += 3
        entries.append(JaasEntry(module, flag, options))
        position += 1
    if not entries:
        raise JaasFileError(f"{where}: section {section} has no login module")
    return tuple(entries), position + 1


def _is(tokens: list[_Token], position: int, punct: str) -> bool:
    return position < len(tokens) and tokens[position].kind == "punct" and tokens[position].text == punct


def _tokenize(text: str, where: str) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            line = text.count("\n", 0, position) + 1
            raise JaasFileError(f"{where}, line {line}: unexpected character (an unclosed quote or comment?)")
        line = text.count("\n", 0, position) + 1
        position = match.end()
        if match["quoted"] is not None:
            tokens.append(_Token("value", re.sub(r"\\(.)", r"\1", match["quoted"][1:-1]), line))
        elif match["word"] is not None:
            tokens.append(_Token("word", match["word"], line))
        elif match["punct"] is not None:
            tokens.append(_Token("punct", match["punct"], line))
    return tokens
