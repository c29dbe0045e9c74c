"""Consumer groups: the list, one group's members and lag (with a live chart), and resetting offsets."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from spate.client.admin.admin_types import GroupDescription
from spate.console.cluster_view import PartitionLag
from spate.console.rendering import esc, link, table
from spate.console.topic_pages import topic_href

RESET_MODES = ("earliest", "latest", "offset")


def group_href(group_id: str, suffix: str = "") -> str:
    return f"/groups/{quote(group_id, safe='')}{suffix}"


@dataclass(frozen=True, slots=True)
class ResetPlan:
    """New committed offsets for a group's partitions of one topic, with the current ones to compare."""

    group_id: str
    topic: str
    mode: str
    offset: int | None
    rows: tuple[tuple[int, int | None, int], ...]  # partition, current committed, new offset


def groups_body(groups: dict[str, GroupDescription]) -> str:
    rows = [
        [link(group_href(g.group_id), g.group_id), esc(g.state), esc(g.protocol_type or "-"),
         esc(g.protocol or "-"), esc(len(g.members))]
        for g in groups.values()
    ]
    return table(["group", "state", "protocol type", "assignor", "members"], rows, table_id="groups",
                 empty="no consumer groups")


def group_body(group: GroupDescription, lag: list[PartitionLag], *, read_only: bool) -> str:
    members = table(
        ["member", "client id", "host", "assigned partitions"],
        ([esc(m.member_id), esc(m.client_id), esc(m.host),
          esc(", ".join(f"{tp.topic}-{tp.partition}" for tp in m.assignment) or "-")] for m in group.members),
        table_id="members", empty="no members",
    )
    lag_rows = [
        [link(topic_href(p.topic), p.topic), esc(p.partition), esc(_dash(p.committed)), esc(_dash(p.log_end)),
         esc(_dash(p.lag)), esc(p.owner or "-")]
        for p in lag
    ]
    lag_table = table(["topic", "partition", "committed offset", "log end offset", "lag", "owner"], lag_rows,
                      table_id="lag", empty="the group has committed no offsets")
    total = sum(p.lag or 0 for p in lag)
    api = group_href(group.group_id, "/lag").replace("/groups/", "/api/groups/", 1)
    chart = (
        f'<p>Total lag <b id="lag-total" data-lag="{total}">{total}</b> '
        '<small id="chart-status">(updated every second)</small></p>'
        '<svg id="lag-chart" width="640" height="200" viewBox="0 0 640 200" role="img" aria-label="lag over time">'
        '<polyline id="lag-line" fill="none" stroke="#2863c7" stroke-width="2" points=""></polyline>'
        '<text id="lag-max" x="4" y="14" font-size="12"></text></svg>'
        '<div id="lag-legend"><span style="color:#2863c7">\u25A0 total  </span></div>'
        f'<div id="chart-state" data-api="{esc(api)}" hidden></div>'
    )
    topics = sorted({p.topic for p in lag})
    reset = "" if read_only or not topics else _reset_form(group.group_id, topics)
    return (
        f'<p>State <b id="group-state">{esc(group.state)}</b>, protocol {esc(group.protocol or "-")}</p>'
        f"<h2>Lag</h2>{chart}{lag_table}<h2>Members</h2>{members}{reset}"
    )


def _reset_form(group_id: str, topics: list[str]) -> str:
    options = "".join(f'<option value="{esc(t)}">{esc(t)}</option>' for t in topics)
    modes = "".join(f'<option value="{m}">{m}</option>' for m in RESET_MODES)
    return (
        f'<form method="post" action="{esc(group_href(group_id, "/reset"))}" id="reset-form"><fieldset>'
        "<legend>Reset offsets (the group must have no members)</legend>"
        f'<label>Topic <select name="topic">{options}</select></label>'
        f'<label>To <select name="mode" id="reset-mode">{modes}</select></label>'
        '<label>Offset <input name="offset" type="number" min="0"></label>'
        '<button type="submit" id="reset-preview">Preview…</button></fieldset></form>'
    )


def reset_confirmation_body(plan: ResetPlan) -> str:
    rows = [[esc(p), esc(_dash(current)), esc(new)] for p, current, new in plan.rows]
    hidden = "".join(
        f'<input type="hidden" name="{name}" value="{esc(value)}">'
        for name, value in (("topic", plan.topic), ("mode", plan.mode), ("offset", _dash(plan.offset, "")),
                            ("confirm", "yes"))
    )
    return (
        f"<p>Group <b>{esc(plan.group_id)}</b> on topic <b>{esc(plan.topic)}</b>: commit these offsets?</p>"
        + table(["partition", "committed now", "new offset"], rows, table_id="reset-plan")
        + f'<form method="post" action="{esc(group_href(plan.group_id, "/reset"))}">{hidden}'
        '<button type="submit" class="danger" id="confirm-reset">Reset offsets</button> '
        f'{link(group_href(plan.group_id), "cancel")}</form>'
    )


def _dash(value: object, dash: str = "-") -> object:
    return dash if value is None else value


# The live lag chart: poll the JSON endpoint each second and keep the last 60 samples of the total lag (the
# thick line) and of each partition's lag (one thin line each, named in the legend).
LAG_CHART_SCRIPT = """
(function(){
  var SVG = 'http://www.w3.org/2000/svg', W = 640, H = 200, KEEP = 60;
  var COLORS = ['#d1495b', '#00798c', '#edae49', '#66a182', '#8d6cab', '#2e4057', '#f08a4b', '#6c8ead'];
  var api = document.getElementById('chart-state').dataset.api;
  var chart = document.getElementById('lag-chart'), line = document.getElementById('lag-line');
  var label = document.getElementById('lag-max'), legend = document.getElementById('lag-legend');
  var total = document.getElementById('lag-total'), status = document.getElementById('chart-status');
  var history = [Number(total.dataset.lag)], series = {}, lines = {};
  function y(v, max){ return (H - 4 - (v / max) * (H - 24)).toFixed(1); }
  function points(values, max){
    var step = W / (KEEP - 1), offset = KEEP - values.length;
    return values.map(function(v, i){ return v === null ? null : ((offset + i) * step).toFixed(1) + ',' + y(v, max); })
      .filter(function(p){ return p !== null; }).join(' ');
  }
  function partitionLine(name){
    if (lines[name]) return lines[name];
    var color = COLORS[Object.keys(lines).length % COLORS.length];
    var pl = document.createElementNS(SVG, 'polyline');
    pl.setAttribute('fill', 'none'); pl.setAttribute('stroke', color); pl.setAttribute('stroke-width', '1');
    pl.setAttribute('class', 'partition-line'); pl.dataset.partition = name;
    chart.insertBefore(pl, line);
    var item = document.createElement('span'); item.style.color = color; item.textContent = '\u25A0 ' + name + '  ';
    legend.appendChild(item);
    return lines[name] = pl;
  }
  function draw(){
    var all = history.slice();
    Object.keys(series).forEach(function(k){ all = all.concat(series[k].filter(function(v){ return v !== null; })); });
    var max = Math.max.apply(null, all.concat([1]));
    line.setAttribute('points', points(history, max));
    Object.keys(series).forEach(function(k){ partitionLine(k).setAttribute('points', points(series[k], max)); });
    label.textContent = 'max ' + max;
  }
  function updateTable(data){
    document.querySelectorAll('#lag tbody tr').forEach(function(tr){
      var cells = tr.children; if (cells.length < 6) return;
      data.partitions.forEach(function(p){
        if (cells[0].textContent === p.topic && cells[1].textContent === String(p.partition)) {
          cells[2].textContent = p.committed === null ? '-' : p.committed;
          cells[3].textContent = p.log_end === null ? '-' : p.log_end;
          cells[4].textContent = p.lag === null ? '-' : p.lag;
        }
      });
    });
  }
  function poll(){
    fetch(api).then(function(r){ return r.json(); }).then(function(data){
      history.push(data.total_lag); if (history.length > KEEP) history.shift();
      var seen = {};
      data.partitions.forEach(function(p){
        var name = p.topic + '-' + p.partition; seen[name] = true;
        if (!series[name]) series[name] = history.slice(0, -1).map(function(){ return null; });
        series[name].push(p.lag);
      });
      Object.keys(series).forEach(function(k){
        if (!seen[k]) series[k].push(null);
        while (series[k].length > history.length) series[k].shift();
      });
      total.textContent = data.total_lag; total.dataset.lag = data.total_lag;
      updateTable(data);
      line.dataset.samples = history.length;
      draw();
    }).catch(function(e){ status.textContent = '(update failed: ' + e + ')'; });
  }
  draw(); setInterval(poll, 1000);
})();
"""


def lag_json(group_id: str, lag: list[PartitionLag]) -> dict[str, object]:
    return {"group": group_id, "total_lag": sum(p.lag or 0 for p in lag), "partitions": [p.to_json() for p in lag]}
