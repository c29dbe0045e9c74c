"""The console's pages and JSON endpoints, against a fixed cluster: what they show, escape, refuse and do."""

from __future__ import annotations

import json

import pytest

from spate.console.server import ConsoleApp, ConsoleSettings
from tests.spate.console.fake_cluster import HOSTILE, FakeCluster, busy_group


@pytest.fixture
def cluster() -> FakeCluster:
    return FakeCluster()


def app(cluster: FakeCluster, *, read_only: bool = False) -> ConsoleApp:
    return ConsoleApp(cluster, ConsoleSettings(read_only=read_only))  # type: ignore[arg-type]


def get_json(console: ConsoleApp, path: str) -> tuple[int, dict]:
    response = console.handle("GET", path, {})
    assert response.content_type == "application/json"
    return response.status, json.loads(response.body)


@pytest.mark.parametrize("path", ["/", "/topics", "/topics/orders", "/topics/orders/messages", "/replication",
                                  "/groups", "/groups/g%3C1%3E", "/topics/orders/delete"])
def test_every_page_renders(cluster: FakeCluster, path: str) -> None:
    response = app(cluster).handle("GET", path, {})
    assert response.status == 200
    assert response.body.startswith("<!DOCTYPE html>")


def test_overview_counts_brokers_partitions_and_under_replicated(cluster: FakeCluster) -> None:
    body = app(cluster).handle("GET", "/", {}).body
    assert '<div class="stat" id="stat-partitions"><b>2</b>' in body
    assert '<div class="stat" id="stat-under-replicated"><b>1</b>' in body
    assert "r&lt;1&gt;" in body  # the rack name is escaped


def test_message_browser_escapes_keys_and_shows_json_and_headers(cluster: FakeCluster) -> None:
    body = app(cluster).handle("GET", "/topics/orders/messages?partition=1", {}).body
    assert HOSTILE not in body
    assert "&lt;img src=x onerror=alert(1)&gt;" in body
    assert '<pre class="fmt-json" data-format="json">{\n  &quot;n&quot;: 1\n}</pre>' in body
    assert "00 01" in body  # a binary header value is shown as hex


def test_group_ids_are_escaped_in_links_and_text(cluster: FakeCluster) -> None:
    body = app(cluster).handle("GET", "/groups", {}).body
    assert 'href="/groups/g%3C1%3E"' in body and "g&lt;1&gt;" in body


def test_unknown_pages_are_404(cluster: FakeCluster) -> None:
    assert app(cluster).handle("GET", "/nowhere", {}).status == 404
    assert get_json(app(cluster), "/api/nowhere")[0] == 404


def test_the_topic_page_shows_each_partitions_size_on_its_leader(cluster: FakeCluster) -> None:
    body = app(cluster).handle("GET", "/topics/orders", {}).body
    assert "size (bytes)" in body
    assert "<td>4096</td>" in body  # partition 0; partition 1's leader did not tell, so it shows a dash


def test_api_cluster(cluster: FakeCluster) -> None:
    status, document = get_json(app(cluster), "/api/cluster")
    assert status == 200
    assert document["controller"] == 1 and document["partitions"] == 2
    assert document["under_replicated"] == [{"topic": "orders", "partition": 1}]


def test_api_topics_lists_leaders_replicas_and_isr(cluster: FakeCluster) -> None:
    _, document = get_json(app(cluster), "/api/topics")
    assert document["topics"][0]["partitions"][1] == {"partition": 1, "leader": 2, "replicas": [2, 1], "isr": [2]}


def test_api_records_render_in_the_asked_format(cluster: FakeCluster) -> None:
    _, document = get_json(app(cluster), "/api/topics/orders/records?partition=0&offset=7&format=hex")
    assert document["next_offset"] == 8
    record = document["records"][0]
    assert record["value"] == {"text": "7b 22 6e 22 3a 31 7d", "format": "hex", "size": 7, "truncated": False}
    assert record["headers"] == [{"key": "h", "value": {"text": "00 01", "format": "hex", "size": 2,
                                                        "truncated": False}}]


def test_api_records_refuse_a_bad_query(cluster: FakeCluster) -> None:
    status, document = get_json(app(cluster), "/api/topics/orders/records?offset=abc")
    assert status == 400 and "offset must be a whole number" in document["error"]


def test_api_lag_totals_the_partitions_with_a_committed_offset(cluster: FakeCluster) -> None:
    _, document = get_json(app(cluster), "/api/groups/g1/lag")
    assert document["total_lag"] == 5
    assert [p["lag"] for p in document["partitions"]] == [5, None]


def test_api_is_read_only(cluster: FakeCluster) -> None:
    response = app(cluster).handle("POST", "/api/cluster", {})
    assert response.status == 405


def test_create_topic_from_the_form(cluster: FakeCluster) -> None:
    form = {"name": "new", "partitions": "3", "replication_factor": "-1", "configs": "cleanup.policy=compact"}
    response = app(cluster).handle("POST", "/topics", form)
    assert response.status == 303 and response.location == "/topics/new?flash=created"
    assert cluster.created == [("new", 3, -1, {"cleanup.policy": "compact"})]


def test_create_topic_refuses_bad_numbers_and_configs(cluster: FakeCluster) -> None:
    assert app(cluster).handle("POST", "/topics", {"name": "x", "partitions": "0"}).status == 400
    assert app(cluster).handle("POST", "/topics", {"name": "x", "configs": "nonsense"}).status == 400
    assert cluster.created == []


def test_delete_needs_the_name_typed_again(cluster: FakeCluster) -> None:
    refused = app(cluster).handle("POST", "/topics/orders/delete", {"confirm": "order"})
    assert refused.status == 400 and "type the topic" in refused.body
    assert cluster.deleted == []
    done = app(cluster).handle("POST", "/topics/orders/delete", {"confirm": "orders"})
    assert done.status == 303 and cluster.deleted == ["orders"]


def test_read_only_hides_actions_and_refuses_them(cluster: FakeCluster) -> None:
    console = app(cluster, read_only=True)
    topics = console.handle("GET", "/topics", {}).body
    assert "create-topic" not in topics and 'id="read-only-badge"' in topics
    assert "delete-topic" not in console.handle("GET", "/topics/orders", {}).body
    assert "reset-form" not in console.handle("GET", "/groups/g1", {}).body
    assert console.handle("GET", "/topics/orders/delete", {}).status == 403
    assert console.handle("POST", "/topics/orders/delete", {"confirm": "orders"}).status == 403
    assert console.handle("POST", "/topics", {"name": "x"}).status == 403
    assert console.handle("POST", "/groups/g1/reset", {"topic": "orders", "mode": "earliest"}).status == 403
    assert cluster.deleted == [] and cluster.created == [] and cluster.resets == []


def test_reset_shows_a_plan_and_commits_only_when_confirmed(cluster: FakeCluster) -> None:
    console = app(cluster)
    plan = console.handle("POST", "/groups/g1/reset", {"topic": "orders", "mode": "offset", "offset": "99"})
    assert plan.status == 200 and 'id="confirm-reset"' in plan.body and cluster.resets == []
    done = console.handle("POST", "/groups/g1/reset",
                          {"topic": "orders", "mode": "offset", "offset": "99", "confirm": "yes"})
    assert done.status == 303
    (group, offsets), = cluster.resets
    assert group == "g1" and sorted(offsets.values()) == [10, 10]  # kept within the log end


def test_reset_is_refused_while_the_group_has_members(cluster: FakeCluster, monkeypatch) -> None:
    monkeypatch.setattr(cluster, "group", busy_group)
    response = app(cluster).handle("POST", "/groups/g1/reset", {"topic": "orders", "mode": "earliest",
                                                                "confirm": "yes"})
    assert response.status == 400 and "active member" in response.body
    assert cluster.resets == []


def test_an_unknown_topic_is_a_404_page_and_a_404_document(cluster: FakeCluster, monkeypatch) -> None:
    from spate.client import AdminError, ErrorCode, KafkaError

    def missing(name: str):
        raise AdminError("describe_topics", {name: KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name}")})

    monkeypatch.setattr(cluster, "topic", missing)
    page = app(cluster).handle("GET", "/topics/gone", {})
    assert page.status == 404 and "No such topic" in page.body
    monkeypatch.setattr(cluster, "read_records", lambda *a, **k: missing("gone"))
    status, document = get_json(app(cluster), "/api/topics/gone/records?offset=0")
    assert status == 404 and "gone" in document["error"]


def test_a_cluster_failure_is_a_502_with_the_reason(cluster: FakeCluster, monkeypatch) -> None:
    from spate.client import ErrorCode, KafkaError

    def refuse(*args, **kwargs):
        raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "delete topic orders")

    monkeypatch.setattr(cluster, "delete_topic", refuse)
    response = app(cluster).handle("POST", "/topics/orders/delete", {"confirm": "orders"})
    assert response.status == 502 and "TOPIC_AUTHORIZATION_FAILED" in response.body
