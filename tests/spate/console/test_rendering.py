"""Keys, values and names from the cluster are untrusted: escaped everywhere, shown as text, JSON or hex."""

from __future__ import annotations

import pytest

from spate.console.rendering import MAX_SHOWN_BYTES, esc, link, render_bytes, table


def test_esc_neutralises_markup_and_quotes() -> None:
    assert esc('<script>alert("x")</script>') == "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"
    assert esc("it's") == "it&#x27;s"
    assert esc(None) == ""


def test_auto_shows_json_pretty_printed() -> None:
    shown = render_bytes(b'{"a":1,"b":[true]}')
    assert shown.format == "json"
    assert shown.text == '{\n  "a": 1,\n  "b": [\n    true\n  ]\n}'


def test_auto_shows_plain_utf8_as_text_and_bare_numbers_too() -> None:
    assert render_bytes("héllo".encode()).text == "héllo"
    assert render_bytes(b"42").format == "text"


def test_auto_shows_binary_as_hex() -> None:
    shown = render_bytes(b"\x00\xffab")
    assert (shown.format, shown.text, shown.size) == ("hex", "00 ff 61 62", 4)


def test_valid_utf8_with_control_characters_counts_as_binary() -> None:
    assert render_bytes(b"a\x01b").format == "hex"


def test_hex_is_always_possible() -> None:
    assert render_bytes(b'{"a":1}', "hex").text == "7b 22 61 22 3a 31 7d"


def test_text_format_does_not_reformat_json() -> None:
    assert render_bytes(b'{"a":1}', "text") .text == '{"a":1}'


def test_json_format_falls_back_to_text_then_hex() -> None:
    assert render_bytes(b"not json", "json").format == "text"
    assert render_bytes(b"\xff", "json").format == "hex"


def test_null_is_not_an_empty_value() -> None:
    assert render_bytes(None).text is None
    assert render_bytes(None).format == "null"
    assert render_bytes(b"").text == ""


def test_big_values_are_cut_and_say_so() -> None:
    shown = render_bytes(b"x" * (MAX_SHOWN_BYTES + 10))
    assert shown.truncated and shown.size == MAX_SHOWN_BYTES + 10
    assert len(shown.text) == MAX_SHOWN_BYTES


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown format 'yaml'"):
        render_bytes(b"x", "yaml")


def test_table_escapes_headers_and_says_when_empty() -> None:
    html = table(["<k>"], [], empty="no <rows>")
    assert "&lt;k&gt;" in html and "no &lt;rows&gt;" in html


def test_link_escapes_address_and_text() -> None:
    assert link('/t/"x', "<b>") == '<a href="/t/&quot;x">&lt;b&gt;</a>'
