"""Java ``.properties`` syntax, as Kafka's ``server.properties`` is written.

The rules followed (those of ``java.util.Properties.load``):

* Natural lines end at ``\\n``, ``\\r`` or ``\\r\\n``. Leading spaces, tabs
  and form feeds are ignored.
* A line whose first non-blank character is ``#`` or ``!`` is a comment, and a
  comment never continues onto the next line.
* A line ending in an odd number of backslashes continues on the next natural
  line; that line's leading blanks are dropped. A continuation line starting
  with ``#`` is part of the value, not a comment.
* The key runs to the first unescaped ``=``, ``:`` or blank. Blanks around the
  separator are skipped, and a blank may stand in for the separator
  (``key value``). Everything after is the value, trailing blanks included.
* Escapes in keys and values: ``\\t \\n \\r \\f``, ``\\uXXXX`` (surrogate pairs
  combine), and a backslash before any other character stands for that
  character (``\\=``, ``\\:``, ``\\ ``, ``\\#``, ``\\\\``).
* A key given twice keeps its last value (callers see both entries and decide).

Files are read as UTF-8 (``\\uXXXX`` covers anything else); Java's own loader
reads ISO-8859-1, which only matters for non-ASCII bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from broker_core.config.errors import ConfigError

_BLANKS = " \t\f"
_SEPARATORS = "=:"
_SIMPLE_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


@dataclass(frozen=True)
class PropertyEntry:
    """One ``key=value`` pair and the 1-based line where its logical line starts."""

    key: str
    value: str
    line: int


def read_properties_file(path: Path) -> list[PropertyEntry]:
    """Parse a properties file; any failure is a :class:`ConfigError` naming ``path``."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError("config file not found", path=path) from None
    except IsADirectoryError:
        raise ConfigError("config path is a directory, not a file", path=path) from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file: {exc.strerror or exc}", path=path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"not valid UTF-8 at byte {exc.start}", path=path, line=line) from None
    return parse_properties(text, path=path)


def parse_properties(text: str, *, path: Path | None = None) -> list[PropertyEntry]:
    """Parse properties text into entries in file order (duplicates kept)."""
    entries: list[PropertyEntry] = []
    for line_number, logical in _logical_lines(text):
        key_raw, value_raw = _split_key_value(logical)
        key = _unescape(key_raw, path=path, line=line_number)
        value = _unescape(value_raw, path=path, line=line_number)
        entries.append(PropertyEntry(key=key, value=value, line=line_number))
    return entries


def _natural_lines(text: str) -> list[str]:
    # str.splitlines would also split on \v, \x1c, U+2028 and friends, which
    # Java treats as ordinary characters.
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Join continued lines; drop blank and comment lines. Yields (start line, text)."""
    lines = _natural_lines(text)
    result: list[tuple[int, str]] = []
    index = 0
    while index < len(lines):
        start = index + 1
        current = lines[index].lstrip(_BLANKS)
        index += 1
        if not current or current[0] in "#!":
            continue
        parts: list[str] = []
        while _ends_with_odd_backslashes(current):
            parts.append(current[:-1])
            if index >= len(lines):
                current = ""  # a backslash at end of input continues onto nothing
                break
            current = lines[index].lstrip(_BLANKS)
            index += 1
        parts.append(current)
        result.append((start, "".join(parts)))
    return result


def _ends_with_odd_backslashes(line: str) -> bool:
    count = len(line) - len(line.rstrip("\\"))
    return count % 2 == 1


def _split_key_value(logical: str) -> tuple[str, str]:
    """Split at the first unescaped separator or blank; both parts still escaped."""
    position = 0
    length = len(logical)
    while position < length:
        char = logical[position]
        if char == "\\":
            position += 2
            continue
        if char in _SEPARATORS or char in _BLANKS:
            break
        position += 1
    key = logical[: min(position, length)]
    rest = logical[position:]
    rest = rest.lstrip(_BLANKS)
    if rest and rest[0] in _SEPARATORS:
        rest = rest[1:].lstrip(_BLANKS)
    return key, rest


def _unescape(raw: str, *, path: Path | None, line: int) -> str:
    if "\\" not in raw:
        return raw
    out: list[str] = []
    position = 0
    length = len(raw)
    while position < length:
        char = raw[position]
        if char != "\\":
            out.append(char)
            position += 1
            continue
        if position + 1 >= length:
            # Only reachable for a lone trailing backslash, which Java drops.
            break
        code = raw[position + 1]
        if code == "u":
            digits = raw[position + 2 : position + 6]
            if len(digits) != 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise ConfigError(
                    f"malformed \\uXXXX escape {raw[position:position + 6]!r}", path=path, line=line
                )
            out.append(chr(int(digits, 16)))
            position += 6
            continue
        out.append(_SIMPLE_ESCAPES.get(code, code))
        position += 2
    return _join_surrogates("".join(out), path=path, line=line)


def _join_surrogates(text: str, *, path: Path | None, line: int) -> str:
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return text
    try:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeDecodeError:
        raise ConfigError("unpaired UTF-16 surrogate in \\u escape", path=path, line=line) from None
