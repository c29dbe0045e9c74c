"""``--output json`` on the commands that print results: one JSON document on stdout, for scripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spate.client import Admin, Producer, TopicPartition
from tests.spate.cli.conftest import ADMIN_TIMEOUT_MS, spate

pytestmark = pytest.mark.integration


def json_of(*args: str, bootstrap: str) -> dict:
    result = spate(*args, "--output", "json", bootstrap=bootstrap)
    assert result.returncode == 0, result
    assert len(result.stdout.splitlines()) == 1, result.stdout
    return json.loads(result.stdout)


def test_topics_create_list_add_partitions_and_delete(bootstrap, topic):
    assert json_of("topics", "create", topic, "--partitions", "1", bootstrap=bootstrap) == {"created": topic}
    assert topic in json_of("topics", "list", bootstrap=bootstrap)["topics"]
    assert json_of("topics", "add-partitions", topic, "--partitions", "2", bootstrap=bootstrap) == {
        "topic": topic, "partitions": 2}
    assert json_of("topics", "delete", topic, bootstrap=bootstrap) == {"deleted": topic}


def test_groups_list_describe_reset_and_delete(bootstrap, topic, group, make_topic):
    make_topic(2)
    with Producer(bootstrap) as producer:
        for i in range(10):
            producer.send(topic, b"v", partition=i % 2)
        producer.flush()
    with Admin(bootstrap, default_api_timeout_ms=ADMIN_TIMEOUT_MS) as admin:
        admin.alter_group_offsets(group, {TopicPartition(topic, 0): 2, TopicPartition(topic, 1): 5})

    assert group in json_of("groups", "list", bootstrap=bootstrap)["groups"]
    described = json_of("groups", "describe", group, bootstrap=bootstrap)
    assert described["group"] == group and described["members"] == []
    assert [(p["partition"], p["current_offset"], p["log_end_offset"], p["lag"]) for p in described["partitions"]] == [
        (0, 2, 5, 3), (1, 5, 5, 0)]

    reset = json_of("groups", "reset-offsets", group, "--topic", topic, "--to-earliest", bootstrap=bootstrap)
    assert reset["executed"] is False
    assert [(p["partition"], p["current_offset"], p["new_offset"]) for p in reset["partitions"]] == [(0, 2, 0), (1, 5, 0)]
    assert json_of("groups", "delete", group, bootstrap=bootstrap) == {"deleted": [group]}


def test_transactions_list_describe_and_describe_producers(bootstrap, topic, make_topic):
    make_topic(1)
    txn_id = f"{topic}-txn"
    with Producer(bootstrap, transactional_id=txn_id) as producer:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, b"v", partition=0)
        producer.commit_transaction()

    listed = json_of("transactions", "list", bootstrap=bootstrap)["transactions"]
    mine = next(t for t in listed if t["transactional_id"] == txn_id)
    assert mine["state"] and mine["producer_id"] >= 0
    described = json_of("transactions", "describe", txn_id, bootstrap=bootstrap)
    assert described["producer_id"] == mine["producer_id"]
    producers = json_of("transactions", "describe-producers", "--topic", topic, "--partition", "0",
                        bootstrap=bootstrap)
    assert [p["producer_id"] for p in producers["producers"]] == [mine["producer_id"]]
    assert producers["producers"][0]["current_transaction_start_offset"] is None


def test_certs_create_names_the_files_it_wrote(tmp_path, capsys):
    from spate.cli.main import main

    assert main(["certs", "create", "--dir", str(tmp_path), "--output", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["directory"] == str(tmp_path)
    assert all(Path(document[key]).is_file() for key in ("ca", "broker_keystore", "client_keystore"))


def test_jobs_list_gives_each_job_and_its_last_run(tmp_path, capsys):
    from spate.cli.main import main

    assert main(["jobs", "list", "--state-dir", str(tmp_path), "--output", "json"]) == 0
    jobs = json.loads(capsys.readouterr().out)["jobs"]
    assert "ingest" in [job["name"] for job in jobs]
    assert all(job["last_run"] is None and job["description"] for job in jobs)
