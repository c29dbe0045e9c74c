"""Overview, topics, one topic, and replication pages."""

from __future__ import annotations

from urllib.parse import quote

from spate.client.admin.admin_types import ConfigEntry, TopicDescription
from spate.console.cluster_view import Overview, PartitionState
from spate.console.rendering import esc, ids, link, table


def topic_href(name: str, suffix: str = "") -> str:
    return f"/topics/{quote(name, safe='')}{suffix}"


def overview_body(overview: Overview) -> str:
    cluster = overview.cluster
    controller = cluster.controller
    stats = [
        ("brokers", len(cluster.brokers)), ("topics", len(overview.topics)),
        ("partitions", overview.partition_count), ("under-replicated", len(overview.under_replicated)),
        ("offline", len(overview.offline)),
    ]
    cards = "".join(
        f'<div class="stat" id="stat-{esc(name.replace(" ", "-"))}"><b>{esc(value)}</b>{esc(name)}</div>'
        for name, value in stats
    )
    brokers = table(
        ["node id", "address", "rack", "role"],
        ([esc(b.node_id), esc(b.address), esc(b.rack or "-"), "controller" if b.node_id == cluster.controller_id else ""]
         for b in cluster.brokers),
        table_id="brokers",
    )
    under = table(
        ["topic", "partition"],
        ([link(topic_href(t), t), esc(p)] for t, p in overview.under_replicated),
        table_id="under-replicated", empty="every partition is fully replicated",
    )
    controller_text = f"{controller.node_id} ({controller.address})" if controller else "unknown"
    return (
        f"<p>Cluster id <code id=\"cluster-id\">{esc(cluster.cluster_id or '-')}</code>, "
        f"controller <span id=\"controller\">{esc(controller_text)}</span></p>{cards}"
        f"<h2>Brokers</h2>{brokers}<h2>Under-replicated partitions</h2>{under}"
    )


def topics_body(topics: dict[str, TopicDescription], *, read_only: bool) -> str:
    rows = []
    for name, topic in topics.items():
        under = sum(1 for p in topic.partitions if len(p.isr) < len(p.replicas))
        replication = max((len(p.replicas) for p in topic.partitions), default=0)
        rows.append([
            link(topic_href(name), name), esc(len(topic.partitions)), esc(replication),
            f'<span class="bad">{under}</span>' if under else "0", "yes" if topic.is_internal else "",
        ])
    listing = table(["topic", "partitions", "replication factor", "under-replicated", "internal"], rows,
                    table_id="topics", empty="no topics")
    return listing + ("" if read_only else _create_form())


def _create_form() -> str:
    return (
        '<form method="post" action="/topics" id="create-topic"><fieldset><legend>Create a topic</legend>'
        '<label>Name <input name="name" id="new-topic-name" required maxlength="249"></label>'
        '<label>Partitions <input name="partitions" type="number" min="1" value="1"></label>'
        '<label>Replication factor <input name="replication_factor" type="number" min="-1" value="-1"></label>'
        '<label>Configs <input name="configs" placeholder="cleanup.policy=compact, retention.ms=60000" size="40">'
        '</label><button type="submit" id="create-topic-submit">Create</button></fieldset></form>'
    )


def topic_body(topic: TopicDescription, partitions: list[PartitionState], configs: list[ConfigEntry],
               *, read_only: bool) -> str:
    rows = [
        [esc(p.partition), esc(p.leader if p.leader >= 0 else "none"), ids(p.replicas),
         ids(p.isr) + (' <span class="bad">under-replicated</span>' if p.under_replicated else ""),
         ids(p.offline_replicas), esc(_or_dash(p.earliest)), esc(_or_dash(p.latest)), esc(_or_dash(p.records)),
         esc(_or_dash(p.size_bytes)), link(topic_href(topic.name, f"/messages?partition={p.partition}"), "browse")]
        for p in partitions
    ]
    parts = table(["partition", "leader", "replicas", "ISR", "offline", "earliest offset", "latest offset",
                   "records", "size (bytes)", ""], rows, table_id="partitions")
    config_rows = [
        [esc(c.name), "<i>sensitive</i>" if c.is_sensitive else esc(_or_dash(c.value)), esc(c.source.name.lower())]
        for c in configs
    ]
    config_table = table(["config", "value", "source"], config_rows, table_id="configs")
    actions = "" if read_only else (
        f'<p><a id="delete-topic" href="{esc(topic_href(topic.name, "/delete"))}">Delete this topic…</a></p>'
    )
    return (
        f'<p>{link(topic_href(topic.name, "/messages"), "Browse messages")}</p>'
        f"<h2>Partitions</h2>{parts}<h2>Configs</h2>{config_table}{actions}"
    )


def delete_confirmation_body(name: str) -> str:
    """Deleting a topic asks for its name typed again; the server checks it."""
    return (
        f"<p>Deleting <b>{esc(name)}</b> removes all of its records for good. "
        "Type the topic's name to confirm.</p>"
        f'<form method="post" action="{esc(topic_href(name, "/delete"))}" id="delete-form">'
        '<input name="confirm" id="confirm-name" autocomplete="off" required> '
        '<button type="submit" class="danger" id="confirm-delete">Delete topic</button></form>'
    )


def replication_body(topics: dict[str, TopicDescription]) -> str:
    rows = [
        [link(topic_href(t.name), t.name), esc(p.partition), esc(p.leader if p.leader >= 0 else "none"),
         ids(p.replicas), ids(p.isr),
         '<span class="bad">under-replicated</span>' if len(p.isr) < len(p.replicas) else "in sync"]
        for t in topics.values() for p in t.partitions
    ]
    return table(["topic", "partition", "leader", "replicas", "ISR", "state"], rows, table_id="replication",
                 empty="no partitions")


def _or_dash(value: object) -> object:
    return "-" if value is None else value
