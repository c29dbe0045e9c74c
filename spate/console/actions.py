"""The console's changes to the cluster, from submitted forms: checked here before the admin client sees them."""

from __future__ import annotations

from typing import Mapping

from spate.client import TopicPartition
from spate.console.cluster_view import ClusterView
from spate.console.group_pages import RESET_MODES, ResetPlan


class ActionRefused(Exception):
    """A form the console will not act on; the message says why (shown to the user)."""


class ReadOnlyError(ActionRefused):
    def __init__(self) -> None:
        super().__init__("the console is read-only: actions are disabled")


def form_int(form: Mapping[str, str], name: str, default: int | None = None, *, minimum: int | None = None) -> int:
    text = form.get(name, "").strip()
    if not text:
        if default is None:
            raise ActionRefused(f"{name} is required")
        return default
    try:
        value = int(text)
    except ValueError:
        raise ActionRefused(f"{name} must be a whole number, not {text!r}") from None
    if minimum is not None and value < minimum:
        raise ActionRefused(f"{name} must be at least {minimum}, not {value}")
    return value


def parse_configs(text: str) -> dict[str, str]:
    """``key=value`` pairs separated by commas or newlines."""
    configs: dict[str, str] = {}
    for item in text.replace("\n", ",").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ActionRefused(f"config {item.strip()!r} is not key=value")
        configs[key.strip()] = value.strip()
    return configs


def create_topic(view: ClusterView, form: Mapping[str, str]) -> str:
    name = form.get("name", "").strip()
    if not name:
        raise ActionRefused("a topic needs a name")
    partitions = form_int(form, "partitions", 1, minimum=1)
    replication = form_int(form, "replication_factor", -1, minimum=-1)
    view.create_topic(name, partitions, replication, parse_configs(form.get("configs", "")))
    return name


def delete_topic(view: ClusterView, name: str, form: Mapping[str, str]) -> None:
    if form.get("confirm", "") != name:
        raise ActionRefused(f"not deleted: type the topic's name {name!r} exactly to confirm")
    view.delete_topic(name)


def reset_plan(view: ClusterView, group_id: str, form: Mapping[str, str]) -> ResetPlan:
    """The offsets a reset would commit, kept within each partition's log (as Kafka's tool does)."""
    topic = form.get("topic", "")
    mode = form.get("mode", "")
    if mode not in RESET_MODES:
        raise ActionRefused(f"reset mode must be one of {', '.join(RESET_MODES)}, not {mode!r}")
    offset = form_int(form, "offset", minimum=0) if mode == "offset" else None
    description = view.topic(topic)
    tps = [TopicPartition(topic, p.partition) for p in description.partitions]
    earliest, latest = view.log_bounds(tps)
    committed = {p.partition: p.committed for p in view.group_lag(group_id) if p.topic == topic}
    rows = []
    for tp in tps:
        low, high = earliest.get(tp, 0), latest.get(tp, 0)
        target = low if mode == "earliest" else high if mode == "latest" else min(max(offset or 0, low), high)
        rows.append((tp.partition, committed.get(tp.partition), target))
    return ResetPlan(group_id, topic, mode, offset, tuple(rows))


def apply_reset(view: ClusterView, plan: ResetPlan) -> None:
    group = view.group(plan.group_id)
    if group.members:
        raise ActionRefused(f"group {plan.group_id!r} has {len(group.members)} active member(s): stop them first, "
                            "or their next commit undoes the reset")
    view.reset_offsets(plan.group_id, {TopicPartition(plan.topic, p): new for p, _, new in plan.rows})
