"""The message browser: one partition from an offset or a timestamp, keys and values as text, JSON or hex."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from spate.client.admin.admin_types import TopicDescription
from spate.client.consumer.consumer_record import ConsumerRecord
from spate.console.rendering import FORMATS, RenderedValue, esc, render_bytes, table
from spate.console.topic_pages import topic_href


@dataclass(frozen=True, slots=True)
class BrowseQuery:
    """What the browser asked for; ``offset`` and ``timestamp_ms`` None means the newest records."""

    partition: int = 0
    offset: int | None = None
    timestamp_ms: int | None = None
    limit: int = 50
    format: str = "auto"


def record_json(record: ConsumerRecord, fmt: str) -> dict[str, Any]:
    return {
        "offset": record.offset,
        "timestamp": record.timestamp,
        "time": _iso(record.timestamp),
        "key": render_bytes(record.key, fmt).to_json(),
        "value": render_bytes(record.value, fmt).to_json(),
        "headers": [{"key": key, "value": render_bytes(value, fmt).to_json()} for key, value in record.headers],
    }


def _iso(timestamp_ms: int) -> str:
    if timestamp_ms < 0:
        return "-"
    return datetime.fromtimestamp(timestamp_ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds")


def _cell(value: RenderedValue) -> str:
    if value.text is None:
        return '<i class="null">null</i>'
    cut = " …" if value.truncated else ""
    return f'<pre class="fmt-{esc(value.format)}" data-format="{esc(value.format)}">{esc(value.text)}{cut}</pre>'


def _headers_cell(headers: list[dict[str, Any]]) -> str:
    parts = [f"<div><b>{esc(h['key'])}</b>: {_cell(RenderedValue(**h['value']))}</div>" for h in headers]
    return "".join(parts) or ""


def browser_body(topic: TopicDescription, query: BrowseQuery, records: list[ConsumerRecord], next_offset: int) -> str:
    partitions = "".join(
        f'<option value="{p.partition}"{" selected" if p.partition == query.partition else ""}>{p.partition}</option>'
        for p in topic.partitions
    )
    formats = "".join(
        f'<option value="{f}"{" selected" if f == query.format else ""}>{f}</option>' for f in FORMATS
    )
    form = (
        f'<form method="get" action="{esc(topic_href(topic.name, "/messages"))}" id="browse-form"><fieldset>'
        f'<label>Partition <select name="partition" id="partition">{partitions}</select></label>'
        f'<label>Offset <input name="offset" id="offset" type="number" min="0" value="{esc(_blank(query.offset))}"'
        ' placeholder="newest"></label>'
        f'<label>or time <input name="timestamp" id="timestamp" value="{esc(_blank(query.timestamp_ms))}"'
        ' placeholder="ms or 2024-05-01T12:00:00Z"></label>'
        f'<label>Limit <input name="limit" type="number" min="1" max="500" value="{query.limit}"></label>'
        f'<label>Show as <select name="format" id="format">{formats}</select></label>'
        '<button type="submit" id="browse-submit">Read</button>'
        '<label><input type="checkbox" id="follow"> follow new records</label></fieldset></form>'
    )
    shown = [record_json(r, query.format) for r in records]
    rows = [
        [esc(r["offset"]), esc(r["time"]), _cell(RenderedValue(**r["key"])), _cell(RenderedValue(**r["value"])),
         _headers_cell(r["headers"])]
        for r in shown
    ]
    listing = table(["offset", "timestamp", "key", "value", "headers"], rows, table_id="records",
                    empty="no records in this range")
    api = topic_href(topic.name, "/records").replace("/topics/", "/api/topics/", 1)
    state = json.dumps({"api": api, "partition": query.partition, "next": next_offset, "format": query.format})
    return (
        f"{form}<p id=\"browse-status\">{len(records)} record(s); next offset {next_offset}</p>{listing}"
        f'<div id="browser-state" data-state="{esc(state)}" hidden></div>'
    )


def _blank(value: int | None) -> str:
    return "" if value is None else str(value)


# Follow mode: poll the JSON endpoint for records after the last one shown and append them.
# Everything from the broker is inserted with textContent, never as markup.
FOLLOW_SCRIPT = """
(function(){
  var state = JSON.parse(document.getElementById('browser-state').dataset.state);
  var body = document.querySelector('#records tbody');
  var status = document.getElementById('browse-status');
  var timer = null;
  function valueCell(v){
    var td = document.createElement('td');
    if (v.text === null) { var i = document.createElement('i'); i.textContent = 'null'; td.appendChild(i); return td; }
    var pre = document.createElement('pre'); pre.className = 'fmt-' + v.format; pre.dataset.format = v.format;
    pre.textContent = v.text + (v.truncated ? ' \\u2026' : ''); td.appendChild(pre); return td;
  }
  function textCell(t){ var td = document.createElement('td'); td.textContent = t; return td; }
  function headersCell(hs){
    var td = document.createElement('td');
    hs.forEach(function(h){ var d = document.createElement('div'); var b = document.createElement('b');
      b.textContent = h.key; d.appendChild(b); d.appendChild(document.createTextNode(': '));
      d.appendChild(valueCell(h.value).firstChild); td.appendChild(d); });
    return td;
  }
  function poll(){
    var url = state.api + '?partition=' + state.partition + '&offset=' + state.next + '&format=' + state.format;
    fetch(url).then(function(r){ return r.json(); }).then(function(data){
      if (data.records.length) {
        var empty = body.querySelector('td.empty'); if (empty) empty.parentNode.remove();
      }
      data.records.forEach(function(r){
        var tr = document.createElement('tr');
        [textCell(r.offset), textCell(r.time), valueCell(r.key), valueCell(r.value), headersCell(r.headers)]
          .forEach(function(td){ tr.appendChild(td); });
        body.appendChild(tr);
      });
      state.next = data.next_offset;
      status.textContent = 'following; next offset ' + state.next;
    }).catch(function(e){ status.textContent = 'follow failed: ' + e; });
  }
  document.getElementById('follow').addEventListener('change', function(ev){
    if (ev.target.checked) { poll(); timer = setInterval(poll, 1000); }
    else { clearInterval(timer); timer = null; }
  });
})();
"""
