"""Java properties syntax: a table of tricky inputs and the entries they mean."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_core.config.errors import ConfigError
from broker_core.config.properties_file import (
    PropertyEntry,
    parse_properties,
    read_properties_file,
)


def pairs(text: str) -> list[tuple[str, str]]:
    return [(entry.key, entry.value) for entry in parse_properties(text)]


SYNTAX_TABLE = [
    pytest.param("a=b\n", [("a", "b")], id="equals"),
    pytest.param("a:b\n", [("a", "b")], id="colon"),
    pytest.param("a b\n", [("a", "b")], id="blank-as-separator"),
    pytest.param("a \t = \t b\n", [("a", "b")], id="blanks-around-separator"),
    pytest.param("a = b   \n", [("a", "b   ")], id="trailing-blanks-kept"),
    pytest.param("   a=b\n", [("a", "b")], id="leading-blanks-dropped"),
    pytest.param("a=\n", [("a", "")], id="empty-value"),
    pytest.param("a\n", [("a", "")], id="key-alone"),
    pytest.param("a==b\n", [("a", "=b")], id="second-equals-is-value"),
    pytest.param("a=b=c\n", [("a", "b=c")], id="equals-inside-value"),
    pytest.param("a b c\n", [("a", "b c")], id="blank-then-words"),
    pytest.param("a : =b\n", [("a", "=b")], id="only-one-separator-consumed"),
    pytest.param("# comment\n! bang comment\n\n   \na=1\n", [("a", "1")], id="comments-and-blank-lines"),
    pytest.param("  # indented comment\na=1\n", [("a", "1")], id="indented-comment"),
    pytest.param("a=1 # not a comment\n", [("a", "1 # not a comment")], id="hash-inside-value"),
    pytest.param("# comment ends in backslash \\\na=1\n", [("a", "1")], id="comment-never-continues"),
    pytest.param("a=one \\\n    two\n", [("a", "one two")], id="continuation-drops-leading-blanks"),
    pytest.param("a=x\\\n\\\n  y\n", [("a", "xy")], id="continuation-through-empty-continued-line"),
    pytest.param("a=x\\\n# still value\n", [("a", "x# still value")], id="hash-on-continuation-is-value"),
    pytest.param("a=x\\\\\nb=y\n", [("a", "x\\"), ("b", "y")], id="even-backslashes-do-not-continue"),
    pytest.param("a=x\\\\\\\ny\n", [("a", "x\\y")], id="odd-backslashes-continue"),
    pytest.param("a=x\\", [("a", "x")], id="backslash-at-end-of-input"),
    pytest.param("a=x\\\n", [("a", "x")], id="continuation-onto-end-of-input"),
    pytest.param("k\\=ey=v\n", [("k=ey", "v")], id="escaped-equals-in-key"),
    pytest.param("k\\:ey:v\n", [("k:ey", "v")], id="escaped-colon-in-key"),
    pytest.param("my\\ key=v\n", [("my key", "v")], id="escaped-space-in-key"),
    pytest.param("\\#notcomment=v\n", [("#notcomment", "v")], id="escaped-hash-starts-key"),
    pytest.param("a=\\ lead\n", [("a", " lead")], id="escaped-leading-space-in-value"),
    pytest.param("a=t\\tn\\nr\\rf\\f\n", [("a", "t\tn\nr\rf\f")], id="control-escapes"),
    pytest.param("a=\\q\\\\\n", [("a", "q\\")], id="unknown-escape-is-the-char"),
    pytest.param("a=\\u0041\\u00e9\n", [("a", "Aé")], id="unicode-escapes"),
    pytest.param("a=\\uD83D\\uDE00\n", [("a", "\U0001F600")], id="surrogate-pair-escape"),
    pytest.param("a=é€\n", [("a", "é€")], id="utf8-text"),
    pytest.param("a=1\r\nb=2\rc=3\n", [("a", "1"), ("b", "2"), ("c", "3")], id="crlf-cr-lf-line-ends"),
    pytest.param("a=1\nb=2\na=3\n", [("a", "1"), ("b", "2"), ("a", "3")], id="duplicates-kept-in-order"),
    pytest.param("\fa=1\n", [("a", "1")], id="form-feed-is-blank"),
    pytest.param("a=x\vy\n", [("a", "x\vy")], id="vertical-tab-is-not-a-line-end"),
    pytest.param("=v\n", [("", "v")], id="empty-key"),
    pytest.param("", [], id="empty-input"),
]


@pytest.mark.parametrize("text, expected", SYNTAX_TABLE)
def test_properties_syntax_table(text: str, expected: list[tuple[str, str]]) -> None:
    assert pairs(text) == expected


def test_entries_carry_the_line_where_their_logical_line_starts() -> None:
    text = "# header\n\na=1\nb=two \\\n  lines\nc=3\n"
    assert parse_properties(text) == [
        PropertyEntry("a", "1", 3),
        PropertyEntry("b", "two lines", 4),
        PropertyEntry("c", "3", 6),
    ]


@pytest.mark.parametrize("escape", ["\\u12", "\\u12G4", "\\uZZZZ", "\\u"])
def test_malformed_unicode_escape_names_the_line(escape: str) -> None:
    with pytest.raises(ConfigError, match=r"malformed \\uXXXX") as info:
        parse_properties(f"ok=1\nbad={escape}\n", path=Path("/etc/x.properties"))
    assert info.value.line == 2
    assert str(info.value).startswith("/etc/x.properties:2:")


def test_unpaired_surrogate_escape_is_an_error() -> None:
    with pytest.raises(ConfigError, match="surrogate"):
        parse_properties("a=\\uD83D\n")


def test_missing_file_error_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.properties"
    with pytest.raises(ConfigError, match="not found") as info:
        read_properties_file(missing)
    assert str(missing) in str(info.value)


def test_directory_instead_of_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="directory") as info:
        read_properties_file(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_invalid_utf8_error_names_path_and_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.properties"
    path.write_bytes(b"a=1\nb=caf\xe9\n")
    with pytest.raises(ConfigError, match="UTF-8") as info:
        read_properties_file(path)
    assert info.value.path == path
    assert info.value.line == 2


def test_file_bytes_parse_like_text(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_bytes(b"# c\r\nlog.dirs = /a,\\\r\n   /b\r\n")
    assert read_properties_file(path) == [PropertyEntry("log.dirs", "/a,/b", 2)]


def _escape(text: str, *, is_key: bool) -> str:
    """A writer for the round-trip property: escape what the syntax would eat."""
    out = []
    for index, char in enumerate(text):
        if char == "\\":
            out.append("\\\\")
        elif char in "\t\n\r\f":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}[char])
        elif char in "=:#!" or (char == " " and (is_key or index == 0)):
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) > 0x7E:
            out.append("".join(f"\\u{unit:04x}" for unit in _utf16_units(char)))
        else:
            out.append(char)
    return "".join(out)


def _utf16_units(char: str) -> list[int]:
    data = char.encode("utf-16-be")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.text(min_size=1, max_size=12).filter(lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s)),
        st.text(max_size=20).filter(lambda s: not any(0xD800 <= ord(c) <= 0xDFFF for c in s)),
        max_size=6,
    )
)
def test_escaped_entries_round_trip(entries: dict[str, str]) -> None:
    text = "".join(f"{_escape(k, is_key=True)}={_escape(v, is_key=False)}\n" for k, v in entries.items())
    assert dict(pairs(text)) == entries


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab=: \t\\#!u0F\n\r"), max_size=40))
def test_any_text_parses_or_raises_config_error(text: str) -> None:
    try:
        entries = parse_properties(text)
    except ConfigError:
        return
    assert all(isinstance(entry.key, str) and entry.line >= 1 for entry in entries)
