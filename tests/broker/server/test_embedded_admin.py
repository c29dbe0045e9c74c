"""The cluster admin APIs on the embedded single broker: it is its own controller and holds every replica."""

from __future__ import annotations

from broker_core.config.incremental_configs import OP_APPEND, OP_DELETE, OP_SET, OP_SUBTRACT
from spate.protocol.errors import ErrorCode
from spate.structs import TopicPartition
from tests.support.admin_requests import (
    alter_reassignments,
    create_topic,
    describe_cluster,
    describe_topic_configs,
    elect_preferred_leaders,
    election_errors,
    incremental_alter_configs,
    list_reassignments,
)

E = ErrorCode


def _configs(address: str, topic: str) -> dict[str, str]:
    return {c.name: c.value for c in describe_topic_configs(address, topic).configs}


def test_incremental_alter_configs_changes_only_the_named_keys(broker, topic_name) -> None:
    address, topic = broker.bootstrap_servers, topic_name()
    assert create_topic(address, topic, partitions=1, configs={"segment.ms": "100000"}).error_code == E.NONE
    result = incremental_alter_configs(address, topic, [("retention.ms", OP_SET, "5000"),
                                                        ("cleanup.policy", OP_APPEND, "compact")])
    assert result.error_code == E.NONE
    configs = _configs(address, topic)
    assert (configs["retention.ms"], configs["cleanup.policy"], configs["segment.ms"]) == (
        "5000", "delete,compact", "100000"
    )
    incremental_alter_configs(address, topic, [("cleanup.policy", OP_SUBTRACT, "delete"),
                                               ("segment.ms", OP_DELETE, None)])
    configs = _configs(address, topic)
    assert configs["cleanup.policy"] == "compact" and configs["segment.ms"] != "100000"


def test_incremental_alter_configs_validate_only_and_errors(broker, topic_name) -> None:
    address, topic = broker.bootstrap_servers, topic_name()
    create_topic(address, topic, partitions=1)
    assert incremental_alter_configs(address, topic, [("retention.ms", OP_SET, "1")],
                                     validate_only=True).error_code == E.NONE
    assert _configs(address, topic)["retention.ms"] != "1"
    assert incremental_alter_configs(address, topic, [("retention.ms", OP_APPEND, "1")]).error_code == (
        E.INVALID_REQUEST
    )
    assert incremental_alter_configs(address, topic, [("retention.ms", OP_SET, "x")]).error_code == E.INVALID_CONFIG
    assert incremental_alter_configs(address, "nothing", [("retention.ms", OP_SET, "1")]).error_code == (
        E.UNKNOWN_TOPIC_OR_PARTITION
    )


def test_the_single_broker_is_the_controller_and_every_leader_is_preferred(broker, topic_name) -> None:
    address, topic = broker.bootstrap_servers, topic_name()
    create_topic(address, topic, partitions=2)
    cluster = describe_cluster(address)
    assert [b.broker_id for b in cluster.brokers] == [cluster.controller_id]
    tps = [TopicPartition(topic, 0), TopicPartition(topic, 5)]
    assert election_errors(elect_preferred_leaders(address, tps)) == {
        tps[0]: E.ELECTION_NOT_NEEDED, tps[1]: E.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert election_errors(elect_preferred_leaders(address, None)) == {}


def test_reassignments_name_only_this_broker(broker, topic_name) -> None:
    address, topic = broker.bootstrap_servers, topic_name()
    create_topic(address, topic, partitions=1)
    node = describe_cluster(address).controller_id
    tp = TopicPartition(topic, 0)
    assert alter_reassignments(address, {tp: [node]}) == {tp: E.NONE}
    assert alter_reassignments(address, {tp: [node + 1]}) == {tp: E.INVALID_REPLICA_ASSIGNMENT}
    assert alter_reassignments(address, {tp: None}) == {tp: E.NO_REASSIGNMENT_IN_PROGRESS}
    assert list_reassignments(address) == {}
