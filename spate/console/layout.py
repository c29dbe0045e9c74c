"""The page shell every console page shares: head, style, navigation, flash messages."""

from __future__ import annotations

from spate.console.rendering import esc

STYLE = """
body{font-family:system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2b45;color:#fff;padding:.6em 1.2em;display:flex;gap:1.5em;align-items:center}
header a{color:#cfe0ff;text-decoration:none}header a:hover{text-decoration:underline}
header .brand{font-weight:bold;color:#fff}
header .mode{margin-left:auto;font-size:.85em;background:#7a4b00;padding:.2em .6em;border-radius:4px}
main{padding:1em 1.5em}
table{border-collapse:collapse;margin:.5em 0 1.2em;background:#fff}
th,td{border:1px solid #d5d9e0;padding:.3em .6em;text-align:left;vertical-align:top;font-size:.92em}
th{background:#e9edf3}td.empty{color:#888;font-style:italic}
pre{margin:0;white-space:pre-wrap;word-break:break-all;max-width:60em;font-size:.9em}
.flash{padding:.5em .8em;border-radius:4px;margin:.5em 0}
.flash.ok{background:#dff3e2}.flash.error{background:#fbe0e0}
.stat{display:inline-block;background:#fff;border:1px solid #d5d9e0;padding:.6em 1em;margin:0 .6em .6em 0}
.stat b{display:block;font-size:1.6em}
.bad{color:#b00020;font-weight:bold}
form.inline{display:inline}
fieldset{border:1px solid #d5d9e0;background:#fff;margin:.5em 0 1em}
label{margin-right:1em}
button.danger{background:#b00020;color:#fff;border:0;padding:.35em .9em;border-radius:3px}
svg#lag-chart{background:#fff;border:1px solid #d5d9e0}
"""

NAV = (("/", "Overview"), ("/topics", "Topics"), ("/groups", "Consumer groups"), ("/replication", "Replication"))


def page(title: str, body: str, *, read_only: bool, flash: str = "", flash_kind: str = "ok", script: str = "") -> str:
    """A whole HTML page; ``body`` and ``script`` are markup the caller built (and escaped)."""
    nav = "".join(f'<a href="{href}">{esc(text)}</a>' for href, text in NAV)
    mode = '<span class="mode" id="read-only-badge">read-only</span>' if read_only else ""
    notice = f'<div class="flash {esc(flash_kind)}" id="flash">{esc(flash)}</div>' if flash else ""
    tail = f"<script>{script}</script>" if script else ""
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{esc(title)} · Spate console</title><style>{STYLE}</style></head><body>"
        f'<header><a class="brand" href="/">Spate console</a>{nav}{mode}</header>'
        f"<main><h1>{esc(title)}</h1>{notice}{body}</main>{tail}</body></html>"
    )


def error_page(title: str, message: str, *, read_only: bool) -> str:
    return page(title, f'<p class="flash error" id="error">{esc(message)}</p>', read_only=read_only)
