"""How the tools read Kafka's argument syntax (no broker needed)."""

from __future__ import annotations

import pytest

from spate.cli.kafka_tools.configs import parse_config_list
from spate.cli.kafka_tools.tool import KafkaToolParser, ToolUsageError, read_properties
from spate.cli.kafka_tools.topics import replica_assignment
from spate.cli.kafka_tools.transactions import java_string_hash


def test_add_config_keeps_commas_inside_brackets_with_the_value() -> None:
    assert parse_config_list("a=1,cleanup.policy=[compact,delete],b=x=y") == {
        "a": "1", "cleanup.policy": "compact,delete", "b": "x=y",
    }


def test_add_config_without_an_equals_sign_is_refused() -> None:
    with pytest.raises(ToolUsageError, match="expected KEY=VALUE"):
        parse_config_list("retention.ms")


def test_replica_assignment_lists_brokers_per_partition() -> None:
    assert replica_assignment("0:1,1:2,2:0") == {0: [0, 1], 1: [1, 2], 2: [2, 0]}
    with pytest.raises(ToolUsageError, match="different replication factor"):
        replica_assignment("0:1,2")
    with pytest.raises(ToolUsageError, match="duplicate"):
        replica_assignment("1:1")


def test_java_string_hash_matches_javas_string_hash_code_made_non_negative() -> None:
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("polygenelubricants") == 0  # Integer.MIN_VALUE & 0x7fffffff


def test_command_config_is_read_as_java_properties(tmp_path) -> None:
    path = tmp_path / "client.properties"
    path.write_text("# comment\n! also a comment\nclient.id = tools\nrequest.timeout.ms: 5000\n\n")
    assert read_properties(str(path)) == {"client.id": "tools", "request.timeout.ms": "5000"}


def test_a_secured_command_config_is_refused(tmp_path) -> None:
    path = tmp_path / "client.properties"
    path.write_text("security.protocol=SASL_SSL\n")
    parser = KafkaToolParser("kafka-topics.sh", "")
    with pytest.raises(ToolUsageError, match="security.protocol=SASL_SSL is not supported"):
        parser.parse_tool_args(["--bootstrap-server", "b:1", "--command-config", str(path)])


def test_unknown_flags_and_stray_arguments_are_named() -> None:
    parser = KafkaToolParser("kafka-topics.sh", "")
    with pytest.raises(ToolUsageError, match="--zookeeper is not a recognized option"):
        parser.parse_tool_args(["--bootstrap-server", "b:1", "--zookeeper", "zk:2181"])
    with pytest.raises(ToolUsageError, match="unexpected argument 'extra'"):
        parser.parse_tool_args(["--bootstrap-server", "b:1", "extra"])


def test_leader_election_reports_in_kafkas_words(capsys) -> None:
    from spate.cli.errors import CliError
    from spate.cli.kafka_tools.leader_election import report
    from spate.client import ErrorCode, TopicPartition

    assert report("PREFERRED", {TopicPartition("t", 1): ErrorCode.NONE, TopicPartition("t", 0): ErrorCode.NONE,
                                TopicPartition("u", 0): ErrorCode.ELECTION_NOT_NEEDED}) == 0
    assert capsys.readouterr().out.splitlines() == [
        "Successfully completed leader election (PREFERRED) for partitions t-0, t-1",
        "Valid replica already elected for partitions u-0",
    ]
    with pytest.raises(CliError, match="1 replica\\(s\\) could not be elected"):
        report("UNCLEAN", {TopicPartition("t", 0): ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE})
    assert "Error completing leader election (UNCLEAN) for partition: t-0: ELIGIBLE_LEADERS_NOT_AVAILABLE" in (
        capsys.readouterr().out
    )
