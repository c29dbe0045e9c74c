"""Znode codecs: Kafka's paths and byte-exact JSON both ways; malformed data names the path."""

from __future__ import annotations

import uuid

import pytest

from broker_core.cluster.metadata_store import BrokerRegistration, ProducerIdBlock
from broker_core.cluster.zk.errors import ZNodeDecodeError
from broker_core.cluster.zk.znodes import (
    PERSISTENT_PATHS,
    BrokerIdZNode,
    BrokerInfo,
    BrokerSequenceIdZNode,
    ClusterIdZNode,
    ConfigChangeNotificationZNode,
    ControllerEpochZNode,
    ControllerRegistration,
    ControllerZNode,
    DeleteTopicZNode,
    EndPoint,
    IsrChangeNotificationZNode,
    LeaderIsrAndControllerEpoch,
    LogDirEventNotificationZNode,
    PreferredReplicaElectionZNode,
    ProducerIdBlockZNode,
    ReassignPartitionsZNode,
    TopicAssignment,
    TopicConfigZNode,
    TopicPartitionStateZNode,
    TopicPartitionZNode,
    TopicZNode,
)
from spate.structs import TopicPartition

TOPIC_ID = uuid.UUID("64c8971c-de86-44a3-a14f-0a42008d05d9")
TOPIC_ID_TEXT = "ZMiXHN6GRKOhTwpCAI0F2Q"


def test_paths_are_kafkas() -> None:
    assert ClusterIdZNode.path() == "/cluster/id"
    assert BrokerIdZNode.path(3) == "/brokers/ids/3"
    assert BrokerSequenceIdZNode.path() == "/brokers/seqid"
    assert TopicZNode.path("orders") == "/brokers/topics/orders"
    assert TopicPartitionZNode.path("orders", 2) == "/brokers/topics/orders/partitions/2"
    assert TopicPartitionStateZNode.path("orders", 2) == "/brokers/topics/orders/partitions/2/state"
    assert ControllerZNode.path() == "/controller"
    assert ControllerEpochZNode.path() == "/controller_epoch"
    assert TopicConfigZNode.path("orders") == "/config/topics/orders"
    assert ConfigChangeNotificationZNode.create_path() == "/config/changes/config_change_"
    assert DeleteTopicZNode.path("orders") == "/admin/delete_topics/orders"
    assert ProducerIdBlockZNode.path() == "/latest_producer_id_block"
    assert IsrChangeNotificationZNode.create_path() == "/isr_change_notification/isr_change_"
    assert LogDirEventNotificationZNode.create_path() == "/log_dir_event_notification/log_dir_event_"
    assert ReassignPartitionsZNode.path() == "/admin/reassign_partitions"
    assert PreferredReplicaElectionZNode.path() == "/admin/preferred_replica_election"
    assert {"/brokers/ids", "/brokers/topics", "/config/changes", "/config/topics", "/admin/delete_topics",
            "/brokers/seqid", "/isr_change_notification", "/latest_producer_id_block"} <= set(PERSISTENT_PATHS)  # fmt: skip


# --- byte tables: encode gives exactly these bytes, decode gives back the value ---------------

BROKER = BrokerInfo(7, (EndPoint("PLAINTEXT", "h1", 9092),), timestamp_ms=1700000000000)
BROKER_BYTES = (
    b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
    b'"endpoints":["PLAINTEXT://h1:9092"],"jmx_port":-1,"port":9092,"host":"h1","version":5,'
    b'"timestamp":"1700000000000"}'
)
RACKED_BROKER = BrokerInfo(
    1, (EndPoint("CLIENT", "::1", 9093, "SSL"), EndPoint("REPLICATION", "h", 9094)), rack="r1", timestamp_ms=5
)
RACKED_BROKER_BYTES = (
    b'{"features":{},"listener_security_protocol_map":{"CLIENT":"SSL","REPLICATION":"PLAINTEXT"},'
    b'"endpoints":["CLIENT://[::1]:9093","REPLICATION://h:9094"],"jmx_port":-1,"port":9094,"host":"h",'
    b'"version":5,"timestamp":"5","rack":"r1"}'
)
TOPIC = TopicAssignment(TOPIC_ID, {0: (1, 2), 1: (2, 1)})
TOPIC_BYTES = (
    b'{"removing_replicas":{},"partitions":{"0":[1,2],"1":[2,1]},"topic_id":"' + TOPIC_ID_TEXT.encode()
    + b'","adding_replicas":{},"version":3}'
)  # fmt: skip
REASSIGNING_TOPIC = TopicAssignment(TOPIC_ID, {0: (1, 2, 3)}, adding_replicas={0: (3,)}, removing_replicas={0: (1,)})
REASSIGNING_TOPIC_BYTES = (
    b'{"removing_replicas":{"0":[1]},"partitions":{"0":[1,2,3]},"topic_id":"' + TOPIC_ID_TEXT.encode()
    + b'","adding_replicas":{"0":[3]},"version":3}'
)  # fmt: skip
STATE = LeaderIsrAndControllerEpoch(leader=1, leader_epoch=4, isr=(1, 2), controller_epoch=3)
STATE_BYTES = b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":4,"isr":[1,2]}'
RECOVERING_STATE = LeaderIsrAndControllerEpoch(1, 4, (1,), 3, leader_recovery_state=1)
RECOVERING_STATE_BYTES = b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":4,"isr":[1],"leader_recovery_state":1}'
CONTROLLER = ControllerRegistration(broker_id=2, timestamp_ms=1719917952299)
CONTROLLER_BYTES = b'{"version":2,"brokerid":2,"timestamp":"1719917952299","kraftControllerEpoch":-1}'
BLOCK = ProducerIdBlock(first=1000, last=1999, broker_id=1)
BLOCK_BYTES = b'{"version":1,"broker":1,"block_start":"1000","block_end":"1999"}'
ISR_CHANGE = frozenset({TopicPartition("b", 0), TopicPartition("a", 1)})
ISR_CHANGE_BYTES = b'{"version":1,"partitions":[{"topic":"a","partition":1},{"topic":"b","partition":0}]}'
REASSIGNMENT = {TopicPartition("a", 0): (3, 1)}
REASSIGNMENT_BYTES = b'{"version":1,"partitions":[{"topic":"a","partition":0,"replicas":[3,1]}]}'
ELECTION = frozenset({TopicPartition("a", 0)})
ELECTION_BYTES = b'{"version":1,"partitions":[{"topic":"a","partition":0}]}'

CODECS = [
    ("cluster id", lambda: ClusterIdZNode.encode("gThBoKu7RbC2HM_8iSWYig"), ClusterIdZNode.decode,
     b'{"version":"1","id":"gThBoKu7RbC2HM_8iSWYig"}', "gThBoKu7RbC2HM_8iSWYig"),
    ("broker", lambda: BrokerIdZNode.encode(BROKER), lambda data: BrokerIdZNode.decode(7, data), BROKER_BYTES, BROKER),
    ("broker with rack and listeners", lambda: BrokerIdZNode.encode(RACKED_BROKER),
     lambda data: BrokerIdZNode.decode(1, data), RACKED_BROKER_BYTES, RACKED_BROKER),
    ("topic", lambda: TopicZNode.encode(TOPIC), lambda data: TopicZNode.decode("t", data), TOPIC_BYTES, TOPIC),
    ("topic being reassigned", lambda: TopicZNode.encode(REASSIGNING_TOPIC), lambda data: TopicZNode.decode("t", data),
     REASSIGNING_TOPIC_BYTES, REASSIGNING_TOPIC),
    ("partition state", lambda: TopicPartitionStateZNode.encode(STATE),
     lambda data: TopicPartitionStateZNode.decode("t", 0, data), STATE_BYTES, STATE),
    ("recovering partition state", lambda: TopicPartitionStateZNode.encode(RECOVERING_STATE),
     lambda data: TopicPartitionStateZNode.decode("t", 0, data), RECOVERING_STATE_BYTES, RECOVERING_STATE),
    ("controller", lambda: ControllerZNode.encode(CONTROLLER), ControllerZNode.decode, CONTROLLER_BYTES, CONTROLLER),
    ("controller epoch", lambda: ControllerEpochZNode.encode(17), ControllerEpochZNode.decode, b"17", 17),
    ("topic config", lambda: TopicConfigZNode.encode({"segment.bytes": "1024", "cleanup.policy": "compact"}),
     lambda data: TopicConfigZNode.decode("t", data),
     b'{"version":1,"config":{"cleanup.policy":"compact","segment.bytes":"1024"}}',
     {"cleanup.policy": "compact", "segment.bytes": "1024"}),
    ("config change", lambda: ConfigChangeNotificationZNode.encode("topics", "orders"),
     lambda data: ConfigChangeNotificationZNode.decode("config_change_0000000001", data),
     b'{"version":2,"entity_path":"topics/orders"}', ("topics", "orders")),
    ("producer id block", lambda: ProducerIdBlockZNode.encode(BLOCK), ProducerIdBlockZNode.decode, BLOCK_BYTES, BLOCK),
    ("isr change", lambda: IsrChangeNotificationZNode.encode(ISR_CHANGE),
     lambda data: IsrChangeNotificationZNode.decode("isr_change_0000000001", data), ISR_CHANGE_BYTES, ISR_CHANGE),
    ("log dir event", lambda: LogDirEventNotificationZNode.encode(3),
     lambda data: LogDirEventNotificationZNode.decode("log_dir_event_0000000001", data),
     b'{"version":1,"broker":3,"event":1}', 3),
    ("reassignment", lambda: ReassignPartitionsZNode.encode(REASSIGNMENT), ReassignPartitionsZNode.decode,
     REASSIGNMENT_BYTES, REASSIGNMENT),
    ("preferred election", lambda: PreferredReplicaElectionZNode.encode(ELECTION),
     PreferredReplicaElectionZNode.decode, ELECTION_BYTES, ELECTION),
]  # fmt: skip


@pytest.mark.parametrize("name, encode, decode, data, value", CODECS, ids=[c[0] for c in CODECS])
def test_codecs_write_kafkas_bytes_and_read_them_back(name, encode, decode, data, value) -> None:
    assert encode() == data
    assert decode(data) == value


def test_a_topic_id_is_kafkas_22_character_base64() -> None:
    assert TopicZNode.decode("t", TOPIC_BYTES).topic_id == TOPIC_ID


def test_empty_data_markers() -> None:
    assert ProducerIdBlockZNode.decode(b"") is None  # no block taken yet
    assert DeleteTopicZNode.encode() == b"" and BrokerSequenceIdZNode.encode() == b""


def test_broker_info_converts_to_and_from_the_stores_registration() -> None:
    registration = BrokerRegistration(7, "h1", 9092, rack="r")
    info = BrokerInfo.from_registration(registration, timestamp_ms=1)
    assert BrokerIdZNode.decode(7, BrokerIdZNode.encode(info)).registration() == registration


def test_older_registrations_decode() -> None:
    v1 = b'{"version":1,"host":"old","port":9092,"jmx_port":9999,"timestamp":"2233345666"}'
    assert BrokerIdZNode.decode(0, v1).registration() == BrokerRegistration(0, "old", 9092)
    v4 = b'{"version":4,"host":"h","port":1,"jmx_port":-1,"timestamp":"1","endpoints":["SSL://h:2"]}'
    assert BrokerIdZNode.decode(0, v4).endpoints == (EndPoint("SSL", "h", 2, "SSL"),)


def test_a_topic_without_an_id_decodes_with_none() -> None:
    assert TopicZNode.decode("t", b'{"version":1,"partitions":{"0":[1]}}') == TopicAssignment(None, {0: (1,)})


# --- malformed data: one typed error naming the path --------------------------------------------

MALFORMED = [
    (lambda d: LogDirEventNotificationZNode.decode("log_dir_event_1", d), b'{"version":1,"broker":3,"event":2}',
     "/log_dir_event_notification/log_dir_event_1", "unknown log dir event 2"),
    (lambda d: BrokerIdZNode.decode(4, d), b"not json", "/brokers/ids/4", "not valid JSON"),
    (lambda d: BrokerIdZNode.decode(4, d), b"[1]", "/brokers/ids/4", "not a JSON object"),
    (lambda d: BrokerIdZNode.decode(4, d), b'{"version":5,"endpoints":"x"}', "/brokers/ids/4", "'endpoints'"),
    (lambda d: BrokerIdZNode.decode(4, d), b'{"version":5,"endpoints":["nope"]}', "/brokers/ids/4", "NAME://host:port"),
    (lambda d: BrokerIdZNode.decode(4, d), b'{"version":0}', "/brokers/ids/4", "'version'"),
    (lambda d: TopicZNode.decode("t", d), b'{"version":3,"partitions":{"x":[1]}}', "/brokers/topics/t", "'x'"),
    (lambda d: TopicZNode.decode("t", d), b'{"version":3,"partitions":{"0":[true]}}', "/brokers/topics/t", "'partitions.0'"),
    (lambda d: TopicZNode.decode("t", d), b'{"version":3,"partitions":{},"topic_id":"short"}', "/brokers/topics/t",
     "'topic_id'"),
    (lambda d: TopicZNode.decode("t", d), b"", "/brokers/topics/t", "has no data"),
    (lambda d: TopicPartitionStateZNode.decode("t", 1, d), b'{"version":1,"leader":"1"}',
     "/brokers/topics/t/partitions/1/state", "'leader'"),
    (lambda d: TopicPartitionStateZNode.decode("t", 1, d), b'{"version":1,"leader":1,"leader_epoch":0}',
     "/brokers/topics/t/partitions/1/state", "'isr' is missing"),
    (ControllerZNode.decode, b'{"version":2,"brokerid":1.5}', "/controller", "'brokerid'"),
    (ControllerEpochZNode.decode, b"one", "/controller_epoch", "not a decimal integer"),
    (ClusterIdZNode.decode, b'{"version":"1"}', "/cluster/id", "'id' is missing"),
    (lambda d: TopicConfigZNode.decode("t", d), b'{"version":1,"config":{"a":1}}', "/config/topics/t", "'config.a'"),
    (lambda d: ConfigChangeNotificationZNode.decode("config_change_0000000003", d), b'{"version":2,"entity_path":"x"}',
     "/config/changes/config_change_0000000003", "<type>/<name>"),
    (ProducerIdBlockZNode.decode, b'{"version":1,"broker":0,"block_start":"9","block_end":"3"}',
     "/latest_producer_id_block", "below block_start"),
    (ProducerIdBlockZNode.decode, b'{"version":1,"broker":0,"block_start":9,"block_end":"9"}',
     "/latest_producer_id_block", "'block_start'"),
    (lambda d: IsrChangeNotificationZNode.decode("isr_change_0000000001", d), b'{"version":1,"partitions":[{}]}',
     "/isr_change_notification/isr_change_0000000001", "'partitions[0].topic' is missing"),
    (ReassignPartitionsZNode.decode, b'{"version":1,"partitions":[{"topic":"a","partition":-1,"replicas":[]}]}',
     "/admin/reassign_partitions", "'partitions[0].partition'"),
    (PreferredReplicaElectionZNode.decode, b'{"version":1}', "/admin/preferred_replica_election", "'partitions'"),
]  # fmt: skip


@pytest.mark.parametrize("decode, data, path, reason", MALFORMED)
def test_malformed_data_raises_a_decode_error_naming_the_path(decode, data, path, reason) -> None:
    with pytest.raises(ZNodeDecodeError) as info:
        decode(data)
    assert info.value.path == path
    assert str(info.value).startswith(f"znode {path}: ")
    assert reason in str(info.value)
