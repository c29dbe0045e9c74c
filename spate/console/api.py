"""The console's JSON endpoints under /api/, polled by the pages' scripts (and usable by anyone).

* ``GET /api/cluster``: brokers, controller, topic/partition counts, under-replicated partitions.
* ``GET /api/topics``: every topic with its partitions, leaders, replicas and ISR.
* ``GET /api/topics/<topic>/records?partition=&offset=&timestamp=&limit=&format=``: records and the next offset.
* ``GET /api/groups``: groups with state and member count.
* ``GET /api/groups/<group>/lag``: committed offset, log end and lag per partition, and their total.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import unquote

from spate.console.actions import ActionRefused
from spate.console.browse_query import parse_browse_query
from spate.console.cluster_view import ClusterView
from spate.console.group_pages import lag_json
from spate.console.message_pages import record_json


@dataclass(frozen=True, slots=True)
class ApiRequest:
    method: str
    path: str
    query: dict[str, str]


def handle_api(view: ClusterView, request: ApiRequest) -> tuple[int, Any]:
    """The status and JSON document answering ``request``; errors are ``{"error": ...}`` documents."""
    if request.method != "GET":
        return HTTPStatus.METHOD_NOT_ALLOWED, {"error": "the API is read-only: use GET"}
    path = request.path
    try:
        if path == "/api/cluster":
            return HTTPStatus.OK, cluster_json(view)
        if path == "/api/topics":
            return HTTPStatus.OK, {"topics": [topic_json(t) for t in view.topics().values()]}
        if path == "/api/groups":
            return HTTPStatus.OK, {"groups": [
                {"group": g.group_id, "state": g.state, "protocol_type": g.protocol_type, "members": len(g.members)}
                for g in view.groups().values()
            ]}
        match = re.fullmatch(r"/api/topics/([^/]+)/records", path)
        if match:
            return HTTPStatus.OK, records_json(view, unquote(match.group(1)), request.query)
        match = re.fullmatch(r"/api/groups/([^/]+)/lag", path)
        if match:
            group_id = unquote(match.group(1))
            return HTTPStatus.OK, lag_json(group_id, view.group_lag(group_id))
    except ActionRefused as exc:
        return HTTPStatus.BAD_REQUEST, {"error": str(exc)}
    return HTTPStatus.NOT_FOUND, {"error": f"no endpoint at {path}"}


def cluster_json(view: ClusterView) -> dict[str, Any]:
    overview = view.overview()
    cluster = overview.cluster
    return {
        "cluster_id": cluster.cluster_id,
        "controller": cluster.controller_id,
        "brokers": [{"node_id": b.node_id, "host": b.host, "port": b.port, "rack": b.rack} for b in cluster.brokers],
        "topics": len(overview.topics),
        "partitions": overview.partition_count,
        "under_replicated": [{"topic": t, "partition": p} for t, p in overview.under_replicated],
        "offline": [{"topic": t, "partition": p} for t, p in overview.offline],
    }


def topic_json(topic: Any) -> dict[str, Any]:
    return {
        "name": topic.name,
        "internal": topic.is_internal,
        "partitions": [
            {"partition": p.partition, "leader": p.leader, "replicas": list(p.replicas), "isr": list(p.isr)}
            for p in topic.partitions
        ],
    }


def records_json(view: ClusterView, topic: str, query: dict[str, str]) -> dict[str, Any]:
    browse = parse_browse_query(query)
    records, start = view.read_records(topic, browse.partition, offset=browse.offset,
                                       timestamp_ms=browse.timestamp_ms, limit=browse.limit, wait_ms=200)
    next_offset = records[-1].offset + 1 if records else start
    return {"topic": topic, "partition": browse.partition, "next_offset": next_offset,
            "records": [record_json(r, browse.format) for r in records]}
