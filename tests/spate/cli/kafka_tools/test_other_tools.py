"""``kafka-acls.sh``, ``kafka-transactions.sh``, ``kafka-leader-election.sh`` and
``kafka-reassign-partitions.sh`` against a broker process."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.integration


def test_acls_read_their_flags_then_fail_as_a_broker_without_an_authorizer(kafka_tool) -> None:
    result = kafka_tool("kafka-acls.sh", "--add", "--allow-principal", "User:alice", "--operation", "Read",
                        "--topic", "orders", "--group", "billing")
    assert result.returncode == 1
    assert "SecurityDisabledException" in result.stderr and "SECURITY_DISABLED" in result.stderr


def test_acls_name_an_unknown_flag_before_anything_else(kafka_tool) -> None:
    result = kafka_tool("kafka-acls.sh", "--add", "--allow-principle", "User:alice")
    assert result.returncode == 1
    assert "--allow-principle is not a recognized option" in result.stderr


def test_transactions_list_shows_a_committed_transactional_id(kafka_tool, broker, topic) -> None:
    from spate.client import Producer

    with Producer(broker.bootstrap, transactional_id=f"txn-{topic}") as producer:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, b"v")
        producer.commit_transaction()
    listed = kafka_tool("kafka-transactions.sh", "list")
    assert listed.returncode == 0, listed
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert rows[0] == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
    [row] = [r for r in rows if r[0] == f"txn-{topic}"]
    assert row[1] == "0" and row[3] == "CompleteCommit"
    described = kafka_tool("kafka-transactions.sh", "describe", "--transactional-id", f"txn-{topic}")
    assert described.returncode == 0, described
    assert described.stdout.splitlines()[1].split()[:5] == ["0", f"txn-{topic}", row[2], "0", "CompleteCommit"]


def test_leader_election_of_a_partition_whose_preferred_replica_leads(kafka_tool, topic, tmp_path) -> None:
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic, "--partitions", "2")
    result = kafka_tool("kafka-leader-election.sh", "--election-type", "PREFERRED", "--topic", topic,
                        "--partition", "0")
    assert result.returncode == 0, result
    assert result.stdout == f"Valid replica already elected for partitions {topic}-0\n"
    listed = tmp_path / "partitions.json"
    listed.write_text(json.dumps({"partitions": [{"topic": topic, "partition": 0}, {"topic": topic, "partition": 1}]}))
    from_file = kafka_tool("kafka-leader-election.sh", "--election-type", "preferred", "--path-to-json-file",
                           str(listed))
    assert from_file.stdout == f"Valid replica already elected for partitions {topic}-0, {topic}-1\n"
    unknown_type = kafka_tool("kafka-leader-election.sh", "--election-type", "fast", "--all-topic-partitions")
    assert unknown_type.returncode == 1 and "--election-type" in unknown_type.stderr


def test_reassign_execute_then_verify(kafka_tool, topic, tmp_path) -> None:
    kafka_tool("kafka-topics.sh", "--create", "--topic", topic)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [0]}]}))
    executed = kafka_tool("kafka-reassign-partitions.sh", "--execute", "--reassignment-json-file", str(plan))
    assert executed.returncode == 0, executed
    lines = executed.stdout.splitlines()
    assert lines[0] == "Current partition replica assignment"
    assert json.loads(lines[2]) == {"version": 1, "partitions": [
        {"topic": topic, "partition": 0, "replicas": [0], "log_dirs": ["any"]}]}
    assert lines[-1] == f"Successfully started partition reassignments for {topic}-0"
    verified = kafka_tool("kafka-reassign-partitions.sh", "--verify", "--reassignment-json-file", str(plan))
    assert verified.stdout.splitlines() == ["Status of partition reassignment:",
                                            f"Reassignment of partition {topic}-0 is completed."]
    listed = kafka_tool("kafka-reassign-partitions.sh", "--list")
    assert listed.stdout == "No partition reassignments found.\n"
