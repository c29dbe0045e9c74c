"""Turning untrusted bytes and names into HTML and JSON: escaping, and record keys and values as text, JSON or hex.

Everything a page shows passes through :func:`esc` (or is built by the
browser with ``textContent``): topic names, keys, values and headers are
whatever producers wrote.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Iterable, Sequence

# A value longer than this is cut for display; the browser is not a dump tool.
MAX_SHOWN_BYTES = 4096
FORMATS = ("auto", "text", "json", "hex")


def esc(value: object) -> str:
    """HTML-escape ``value``'s text, quotes included, so it is safe in element content and in attributes."""
    return html.escape("" if value is None else str(value), quote=True)


@dataclass(frozen=True, slots=True)
class RenderedValue:
    """A key or value ready to show: its text in the chosen format and the format actually used."""

    text: str | None  # None: the record has no key (or a null value)
    format: str
    size: int
    truncated: bool = False

    def to_json(self) -> dict[str, object]:
        return {"text": self.text, "format": self.format, "size": self.size, "truncated": self.truncated}


def render_bytes(data: bytes | None, fmt: str = "auto") -> RenderedValue:
    """``data`` as ``text`` (UTF-8), ``json`` (pretty-printed), ``hex``, or ``auto``: JSON, else text, else hex.

    A format the bytes do not fit falls back (non-JSON to text, invalid
    UTF-8 to hex, which always works) and ``format`` says what was used.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    if data is None:
        return RenderedValue(None, "null", 0)
    size = len(data)
    shown, truncated = (data[:MAX_SHOWN_BYTES], True) if size > MAX_SHOWN_BYTES else (data, False)
    if fmt in ("auto", "json") and not truncated:
        as_json = _as_json(data)
        if as_json is not None:
            return RenderedValue(as_json, "json", size)
    if fmt in ("auto", "text", "json"):
        text = _as_text(shown)
        if text is not None:
            return RenderedValue(text, "text", size, truncated)
    return RenderedValue(shown.hex(" "), "hex", size, truncated)


def _as_text(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    # Control characters other than whitespace mean binary data that happens to be valid UTF-8.
    if any(ord(ch) < 32 and ch not in "\t\n\r" for ch in text):
        return None
    return text


def _as_json(data: bytes) -> str | None:
    text = _as_text(data)
    if text is None or not text.strip() or text.strip()[0] not in "{[\"":
        return None  # bare numbers and words read better as text
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return None


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, table_id: str = "", empty: str = "none") -> str:
    """An HTML table; ``headers`` are escaped here, ``rows`` hold cells the caller already escaped (or built)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    if not body:
        body = f'<tr><td colspan="{len(headers)}" class="empty">{esc(empty)}</td></tr>'
    id_attr = f' id="{esc(table_id)}"' if table_id else ""
    return f"<table{id_attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def link(href: str, text: object) -> str:
    """An anchor whose address and text are both escaped (paths must already be URL-quoted)."""
    return f'<a href="{esc(href)}">{esc(text)}</a>'


def ids(values: Iterable[int]) -> str:
    return esc(", ".join(str(v) for v in values) or "-")
