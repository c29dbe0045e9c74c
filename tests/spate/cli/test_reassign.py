"""``spate topics reassign`` against a scripted cluster: what it asks the brokers, what it prints, how it waits."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from spate.client import ErrorCode
from spate.protocol import ApiKey
from tests.spate.cli.conftest import assert_one_line_failure, spate
from tests.spate.cli.output import json_lines, table_row
from tests.spate.client.admin.fake_cluster import FakePartition, reassignment_response, reassignments_listing


def accept_everything(fake_cluster) -> None:
    fake_cluster.answers[ApiKey.ALTER_PARTITION_REASSIGNMENTS] = lambda version, body: reassignment_response(
        {(t.name, p.partition_index): ErrorCode.NONE for t in body.topics for p in t.partitions}
    )


def sent_reassignments(fake_cluster) -> dict[tuple[str, int], list[int] | None]:
    return {(t.name, p.partition_index): p.replicas
            for _, body in fake_cluster.sent(ApiKey.ALTER_PARTITION_REASSIGNMENTS) for t in body.topics
            for p in t.partitions}


def test_reassign_one_partition_sends_its_new_replicas(fake_cluster) -> None:
    accept_everything(fake_cluster)
    result = spate("topics", "reassign", "--topic", "orders", "--partition", "1", "--replicas", "2,0",
                   bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    assert result.stdout == "Started reassigning orders-1 to replicas 2,0.\n"
    assert sent_reassignments(fake_cluster) == {("orders", 1): [2, 0]}


def test_cancel_sends_null_replicas(fake_cluster) -> None:
    accept_everything(fake_cluster)
    result = spate("topics", "reassign", "--topic", "orders", "--partition", "0", "--cancel", "--output", "json",
                   bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    assert json_lines(result.stdout) == [
        {"reassignments": [{"topic": "orders", "partition": 0, "replicas": None}], "completed": None}
    ]
    assert sent_reassignments(fake_cluster) == {("orders", 0): None}


def test_a_kafka_reassignment_file_moves_every_partition_it_lists(fake_cluster, tmp_path: Path) -> None:
    accept_everything(fake_cluster)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]},
        {"topic": "orders", "partition": 2, "replicas": [0]},
    ]}))
    result = spate("topics", "reassign", "--reassignment-json-file", str(plan), bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    assert sent_reassignments(fake_cluster) == {("orders", 0): [1, 2], ("orders", 2): [0]}
    cancel = spate("topics", "reassign", "--reassignment-json-file", str(plan), "--cancel",
                   bootstrap=fake_cluster.bootstrap)
    assert cancel.returncode == 0, cancel
    assert cancel.stdout.splitlines() == ["Cancelled the reassignment of orders-0.",
                                          "Cancelled the reassignment of orders-2."]


def test_a_refused_reassignment_is_one_line_naming_the_partition_and_the_code(fake_cluster) -> None:
    fake_cluster.answers[ApiKey.ALTER_PARTITION_REASSIGNMENTS] = lambda version, body: reassignment_response(
        {("orders", 0): ErrorCode.NO_REASSIGNMENT_IN_PROGRESS}
    )
    result = spate("topics", "reassign", "--topic", "orders", "--partition", "0", "--cancel",
                   bootstrap=fake_cluster.bootstrap)
    assert_one_line_failure(result, 1, "orders-0", "NO_REASSIGNMENT_IN_PROGRESS")


def test_list_shows_the_moves_in_progress(fake_cluster) -> None:
    fake_cluster.answers[ApiKey.LIST_PARTITION_REASSIGNMENTS] = lambda version, body: reassignments_listing(
        {("orders", 1): ([1, 2, 0], [0], [2]), ("other", 0): ([0, 1], [1], [])}
    )
    result = spate("topics", "reassign", "--list", bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    assert table_row(result.stdout, "orders") == ["orders", "1", "1,2,0", "0", "2"]
    assert table_row(result.stdout, "other") == ["other", "0", "0,1", "1"]
    only = spate("topics", "reassign", "--list", "--topic", "orders", "--output", "json",
                 bootstrap=fake_cluster.bootstrap)
    assert json_lines(only.stdout) == [{"reassignments": [
        {"topic": "orders", "partition": 1, "replicas": [1, 2, 0], "adding_replicas": [0], "removing_replicas": [2]}
    ]}]


def test_list_with_nothing_moving_says_so(fake_cluster) -> None:
    fake_cluster.answers[ApiKey.LIST_PARTITION_REASSIGNMENTS] = lambda version, body: reassignments_listing({})
    result = spate("topics", "reassign", "--list", bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    assert result.stdout == "No reassignment in progress.\n"


def test_wait_returns_once_the_partition_stopped_moving_and_has_its_new_replicas(fake_cluster) -> None:
    accept_everything(fake_cluster)
    listings = {"count": 0}
    lock = threading.Lock()

    def listing(version, body):
        # In progress for the first two looks, then done: the new replicas show in the metadata.
        with lock:
            listings["count"] += 1
            if listings["count"] <= 2:
                return reassignments_listing({("orders", 0): ([0, 1, 2], [2], [0])})
            fake_cluster.topics["orders"][0] = FakePartition(1, (1, 2))
            return reassignments_listing({})

    fake_cluster.answers[ApiKey.LIST_PARTITION_REASSIGNMENTS] = listing
    result = spate("topics", "reassign", "--topic", "orders", "--partition", "0", "--replicas", "1,2", "--wait",
                   bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    assert result.stdout.splitlines() == ["Started reassigning orders-0 to replicas 1,2.",
                                          "Reassignment of 1 partition(s) complete."]
    assert listings["count"] >= 3
    [(_, body)] = fake_cluster.sent(ApiKey.LIST_PARTITION_REASSIGNMENTS)[:1]
    assert [(t.name, t.partition_indexes) for t in body.topics] == [("orders", [0])]


def test_wait_gives_up_after_its_timeout_with_one_line(fake_cluster) -> None:
    accept_everything(fake_cluster)
    fake_cluster.answers[ApiKey.LIST_PARTITION_REASSIGNMENTS] = lambda version, body: reassignments_listing(
        {("orders", 0): ([0, 1, 2], [2], [0])}
    )
    result = spate("topics", "reassign", "--topic", "orders", "--partition", "0", "--replicas", "1,2", "--wait",
                   "--wait-timeout-ms", "1500", bootstrap=fake_cluster.bootstrap)
    assert_one_line_failure(result, 1, "1 of 1 partition(s) still moving after 1.5s: orders-0")


# --- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--topic", "orders", "--partition", "0"], "give either --replicas or --cancel"),
        (["--topic", "orders", "--partition", "0", "--replicas", "1", "--cancel"], "give either --replicas or --cancel"),
        (["--topic", "orders", "--replicas", "1"], "name a partition"),
        (["--partition", "0", "--replicas", "1"], "--partition needs --topic"),
        (["--list", "--replicas", "1"], "--list only lists"),
        (["--topic", "orders", "--partition", "0", "--replicas", "1,1"], "only one replica of a partition"),
        (["--topic", "orders", "--partition", "0", "--replicas", "a,b"], "expected broker ids"),
        (["--topic", "orders", "--partition", "-1", "--replicas", "1"], "--partition"),
    ],
)
def test_usage_errors_are_one_line_and_exit_two(fake_cluster, args, fragment) -> None:
    result = spate("topics", "reassign", *args, bootstrap=fake_cluster.bootstrap)
    assert_one_line_failure(result, 2, fragment)
    assert fake_cluster.sent(ApiKey.ALTER_PARTITION_REASSIGNMENTS) == []


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("not json", "is not JSON"),
        ('{"partitions": 3}', 'expected {"version": 1, "partitions": [...]}'),
        ('{"version": 2, "partitions": []}', "version 2 is not supported"),
        ('{"version": 1, "partitions": []}', "no partitions listed"),
        ('{"version": 1, "partitions": [{"topic": "t", "partition": 0}]}', "needs replicas"),
        ('{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1]},'
         ' {"topic": "t", "partition": 0, "replicas": [2]}]}', "t-0 is listed twice"),
        ('{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": []}]}', "may not be empty"),
        ('{"version": 1, "partitions": [{"partition": 0, "replicas": [1]}]}', "has no topic"),
    ],
)
def test_an_invalid_reassignment_file_is_one_line(fake_cluster, tmp_path: Path, content, fragment) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(content)
    result = spate("topics", "reassign", "--reassignment-json-file", str(plan), bootstrap=fake_cluster.bootstrap)
    assert_one_line_failure(result, 2, fragment)


def test_a_missing_reassignment_file_is_one_line_and_exit_one(fake_cluster, tmp_path: Path) -> None:
    result = spate("topics", "reassign", "--reassignment-json-file", str(tmp_path / "nope.json"),
                   bootstrap=fake_cluster.bootstrap)
    assert_one_line_failure(result, 1, "cannot read", "nope.json")
