"""``spate topics elect-leaders`` against a scripted cluster: which partitions it names, what it prints."""

from __future__ import annotations

import pytest

from spate.client import ErrorCode
from spate.protocol import ApiKey
from tests.spate.cli.conftest import assert_one_line_failure, spate
from tests.spate.cli.output import json_lines
from tests.spate.client.admin.fake_cluster import election_response

E = ErrorCode


def answer(fake_cluster, results=None, default=E.ELECTION_NOT_NEEDED) -> None:
    """Answer each partition asked from ``results`` (default ``default``); "every partition" gets ``results``."""
    results = results or {}

    def respond(version, body):
        if body.topic_partitions is None:
            return election_response(results)
        asked = [(t.topic, p) for t in body.topic_partitions for p in t.partitions]
        return election_response({tp: results.get(tp, default) for tp in asked})

    fake_cluster.answers[ApiKey.ELECT_LEADERS] = respond


def asked(fake_cluster):
    [(_, body)] = fake_cluster.sent(ApiKey.ELECT_LEADERS)
    return body


def test_preferred_election_of_one_partition(fake_cluster) -> None:
    answer(fake_cluster, {("orders", 2): E.NONE})
    result = spate("topics", "elect-leaders", "--preferred", "--topic", "orders", "--partition", "2",
                   bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    assert result.stdout == "Elected the preferred leader of 1 partition(s): orders-2\n"
    body = asked(fake_cluster)
    assert body.election_type == 0
    assert [(t.topic, t.partitions) for t in body.topic_partitions] == [("orders", [2])]


def test_a_topic_names_all_its_partitions_and_partitions_already_led_are_not_failures(fake_cluster) -> None:
    answer(fake_cluster, {("orders", 1): E.NONE})
    result = spate("topics", "elect-leaders", "--preferred", "--topic", "orders", bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    assert result.stdout.splitlines() == [
        "Elected the preferred leader of 1 partition(s): orders-1",
        "A valid leader was already elected for 2 partition(s): orders-0, orders-2",
    ]
    assert [(t.topic, t.partitions) for t in asked(fake_cluster).topic_partitions] == [("orders", [0, 1, 2])]


def test_all_topic_partitions_asks_for_every_partition_and_reports_as_json(fake_cluster) -> None:
    answer(fake_cluster, {("orders", 0): E.NONE, ("orders", 1): E.ELECTION_NOT_NEEDED})
    result = spate("topics", "elect-leaders", "--preferred", "--all-topic-partitions", "--output", "json",
                   bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    assert json_lines(result.stdout) == [{
        "election_type": "preferred",
        "elected": [{"topic": "orders", "partition": 0}],
        "not_needed": [{"topic": "orders", "partition": 1}],
    }]
    assert asked(fake_cluster).topic_partitions is None


def test_nothing_to_elect_says_so(fake_cluster) -> None:
    answer(fake_cluster, {})
    result = spate("topics", "elect-leaders", "--preferred", "--all-topic-partitions", bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    assert result.stdout == "No partition to elect a leader for.\n"


def test_unclean_election_sends_its_type(fake_cluster) -> None:
    answer(fake_cluster, {("orders", 0): E.NONE})
    result = spate("topics", "elect-leaders", "--unclean", "--topic", "orders", "--partition", "0",
                   bootstrap=fake_cluster.bootstrap)
    assert result.returncode == 0, result
    assert result.stdout == "Elected the unclean leader of 1 partition(s): orders-0\n"
    assert asked(fake_cluster).election_type == 1


def test_a_refused_election_is_one_line_with_the_code(fake_cluster) -> None:
    answer(fake_cluster, {("orders", 0): E.PREFERRED_LEADER_NOT_AVAILABLE})
    result = spate("topics", "elect-leaders", "--preferred", "--topic", "orders", "--partition", "0",
                   bootstrap=fake_cluster.bootstrap)
    assert_one_line_failure(result, 1, "orders-0", "PREFERRED_LEADER_NOT_AVAILABLE")


def test_an_unknown_topic_is_one_line(fake_cluster) -> None:
    result = spate("topics", "elect-leaders", "--preferred", "--topic", "nope", bootstrap=fake_cluster.bootstrap)
    assert_one_line_failure(result, 1, "'nope' does not exist")
    assert fake_cluster.sent(ApiKey.ELECT_LEADERS) == []


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--topic", "orders"], "one of the arguments --preferred --unclean is required"),
        (["--preferred"], "one of the arguments --topic --all-topic-partitions is required"),
        (["--preferred", "--unclean", "--topic", "orders"], "not allowed with argument"),
        (["--preferred", "--topic", "orders", "--all-topic-partitions"], "not allowed with argument"),
        (["--preferred", "--all-topic-partitions", "--partition", "1"], "--partition needs --topic"),
    ],
)
def test_usage_errors_are_one_line_and_exit_two(fake_cluster, args, fragment) -> None:
    result = spate("topics", "elect-leaders", *args, bootstrap=fake_cluster.bootstrap)
    assert_one_line_failure(result, 2, fragment)
    assert fake_cluster.sent(ApiKey.ELECT_LEADERS) == []
