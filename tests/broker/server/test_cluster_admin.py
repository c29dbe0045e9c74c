"""Admin requests to a cluster broker: what it writes to ZooKeeper, what it refuses, and when it answers.

The test holds ``/controller`` and plays the controller: where an answer
must wait for the change to be applied, a helper thread watches ZooKeeper
for the admin's write and sends the UpdateMetadata a controller would.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Callable, Iterator

import pytest

from broker_core.config.incremental_configs import OP_APPEND, OP_DELETE, OP_SET
from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.create_topics import CreateTopicsRequest
from spate.protocol.messages.metadata import MetadataRequest
from spate.structs import TopicPartition
from tests.support.admin_requests import (
    alter_reassignments,
    create_partitions,
    create_topic,
    delete_topic,
    describe_topic_configs,
    elect_preferred_leaders,
    election_errors,
    incremental_alter_configs,
    list_reassignments,
)
from tests.support.cluster import FAKE_CONTROLLER_ID, ClusterForTests, running_cluster
from tests.support.controller_requests import (
    FakeController,
    PartitionSpec,
    call,
)
from tests.support.played_controller import announce

E = ErrorCode


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, zookeeper) -> Iterator[ClusterForTests]:
    with running_cluster(tmp_path_factory.mktemp("cluster"), zookeeper, brokers=2, claim_controller=True) as running:
        yield running


@pytest.fixture(scope="module")
def controller(cluster: ClusterForTests) -> FakeController:
    """The test's controller; like a real one, it first tells every broker who is alive."""
    controller = FakeController(controller_id=FAKE_CONTROLLER_ID, epoch=1)
    announce(cluster, controller, [])
    return controller


def assignment_of(cluster: ClusterForTests, topic: str) -> dict[int, tuple[int, ...]]:
    data = json.loads(cluster.zk.get(f"/brokers/topics/{topic}")[0])
    return {int(p): tuple(r) for p, r in data["partitions"].items()}


def when(condition: Callable[[], object], then: Callable[[], None]) -> threading.Thread:
    """Run ``then`` on a thread once ``condition`` holds (bounded), as a controller reacting to ZooKeeper."""

    def run() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if condition():
                then()
                return
            time.sleep(0.05)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def elect_leaders_for(cluster: ClusterForTests, controller: FakeController, topic: str) -> Callable[[], None]:
    def elect() -> None:
        announce(cluster, controller, [PartitionSpec(topic, p, r[0], replicas=r)
                                       for p, r in assignment_of(cluster, topic).items()])

    return elect


def elect_when_created(cluster: ClusterForTests, controller: FakeController, topic: str) -> threading.Thread:
    return when(lambda: cluster.zk.exists(f"/brokers/topics/{topic}"), elect_leaders_for(cluster, controller, topic))


def test_create_topics_writes_zookeeper_and_answers_once_leaders_exist(
    cluster: ClusterForTests, controller: FakeController, topic_name
) -> None:
    topic = topic_name()
    reacting = elect_when_created(cluster, controller, topic)
    result = create_topic(cluster.address(2), topic, partitions=4, replication_factor=2,
                          configs={"retention.ms": "60000"})
    reacting.join()
    assert result.error_code == E.NONE
    assignment = assignment_of(cluster, topic)
    assert sorted(assignment) == [0, 1, 2, 3]
    assert all(len(set(replicas)) == 2 and set(replicas) <= {1, 2} for replicas in assignment.values())
    assert json.loads(cluster.zk.get(f"/config/topics/{topic}")[0])["config"] == {"retention.ms": "60000"}
    # Only the controller writes partition state.
    assert cluster.zk.exists(f"/brokers/topics/{topic}/partitions") is None
    assert create_topic(cluster.address(1), topic, partitions=1).error_code == E.TOPIC_ALREADY_EXISTS


def test_create_topics_times_out_without_leaders_and_the_topic_stays_requested(cluster, topic_name) -> None:
    topic = topic_name()
    result = create_topic(cluster.address(1), topic, partitions=1, timeout_ms=300)
    assert result.error_code == E.REQUEST_TIMED_OUT
    assert cluster.zk.exists(f"/brokers/topics/{topic}") is not None
    immediate = topic_name("now")
    assert create_topic(cluster.address(1), immediate, partitions=1, timeout_ms=0).error_code == E.REQUEST_TIMED_OUT
    assert cluster.zk.exists(f"/brokers/topics/{immediate}") is not None


def test_validate_only_checks_everything_and_writes_nothing(cluster, topic_name) -> None:
    topic = topic_name()
    result = create_topic(cluster.address(1), topic, partitions=3, replication_factor=2, validate_only=True)
    assert result.error_code == E.NONE
    assert cluster.zk.exists(f"/brokers/topics/{topic}") is None
    assert cluster.zk.exists(f"/config/topics/{topic}") is None
    bad = create_topic(cluster.address(1), topic, partitions=1, configs={"retention.ms": "soon"}, validate_only=True)
    assert bad.error_code == E.INVALID_CONFIG


@pytest.mark.parametrize(
    "kwargs, code",
    [
        ({"partitions": 1, "replication_factor": 3}, E.INVALID_REPLICATION_FACTOR),
        ({"assignment": {0: [1, 9]}}, E.INVALID_REPLICA_ASSIGNMENT),
        ({"assignment": {0: [1, 1]}}, E.INVALID_REPLICA_ASSIGNMENT),
        ({"assignment": {0: [1], 2: [2]}}, E.INVALID_REPLICA_ASSIGNMENT),
        ({"assignment": {0: [1]}, "partitions": 1}, E.INVALID_REQUEST),
        ({"partitions": 0}, E.INVALID_PARTITIONS),
        ({"partitions": 1, "configs": {"no.such.config": "1"}}, E.INVALID_CONFIG),
    ],
)
def test_bad_create_topics_arguments_get_kafkas_codes_and_write_nothing(cluster, topic_name, kwargs, code) -> None:
    topic = topic_name()
    assert create_topic(cluster.address(1), topic, **kwargs).error_code == code
    assert cluster.zk.exists(f"/brokers/topics/{topic}") is None


def test_delete_topics_asks_the_controller_and_answers_once_the_topic_is_gone(
    cluster: ClusterForTests, controller: FakeController, topic_name
) -> None:
    topic = topic_name()
    reacting = elect_when_created(cluster, controller, topic)
    assert create_topic(cluster.address(1), topic, assignment={0: [1]}).error_code == E.NONE
    reacting.join()
    assert delete_topic(cluster.address(1), "never-existed") == E.UNKNOWN_TOPIC_OR_PARTITION
    assert delete_topic(cluster.address(2), topic, timeout_ms=200) == E.REQUEST_TIMED_OUT
    assert cluster.zk.exists(f"/admin/delete_topics/{topic}") is not None

    def forget() -> None:
        announce(cluster, controller, controller.deleting(topic, [0]))

    # The controller finishes a second after the request goes out, so the request finds the deletion pending
    # (finished before it arrives, it would find no topic: UNKNOWN_TOPIC_OR_PARTITION).
    asked_at = time.monotonic()
    reacting = when(lambda: time.monotonic() > asked_at + 1.0, forget)
    assert delete_topic(cluster.address(2), topic) == E.NONE  # asked again: still answered when done
    reacting.join()
    assert delete_topic(cluster.address(1), "__consumer_offsets") in (E.INVALID_TOPIC_EXCEPTION,
                                                                       E.UNKNOWN_TOPIC_OR_PARTITION)


def test_create_partitions_grows_the_assignment(cluster: ClusterForTests, controller: FakeController,
                                                topic_name) -> None:
    topic = topic_name()
    reacting = elect_when_created(cluster, controller, topic)
    assert create_topic(cluster.address(1), topic, assignment={0: [1], 1: [2]}).error_code == E.NONE
    reacting.join()
    unknown_broker = create_partitions(cluster.address(2), topic, 3, assignment=[[9]])
    assert unknown_broker.error_code == E.INVALID_REPLICA_ASSIGNMENT
    assert create_partitions(cluster.address(2), topic, 2).error_code == E.INVALID_PARTITIONS
    assert create_partitions(cluster.address(2), topic, 4, validate_only=True).error_code == E.NONE
    assert len(assignment_of(cluster, topic)) == 2
    grown = threading.Event()
    reacting = when(lambda: len(assignment_of(cluster, topic)) == 4,
                    lambda: (elect_leaders_for(cluster, controller, topic)(), grown.set()))
    assert create_partitions(cluster.address(2), topic, 4, assignment=[[1], [2]]).error_code == E.NONE
    reacting.join()
    assert assignment_of(cluster, topic) == {0: (1,), 1: (2,), 2: (1,), 3: (2,)}
    assert create_partitions(cluster.address(1), "nothing", 2).error_code == E.UNKNOWN_TOPIC_OR_PARTITION


def test_config_changes_reach_zookeeper_and_every_broker_reloads_them(
    cluster: ClusterForTests, controller: FakeController, topic_name
) -> None:
    topic = topic_name()
    reacting = elect_when_created(cluster, controller, topic)
    assert create_topic(cluster.address(1), topic, assignment={0: [1]}).error_code == E.NONE
    reacting.join()
    result = incremental_alter_configs(cluster.address(2), topic, [
        ("retention.ms", OP_SET, "7777"), ("cleanup.policy", OP_APPEND, "compact"), ("segment.ms", OP_DELETE, None),
    ])
    assert result.error_code == E.NONE
    stored = json.loads(cluster.zk.get(f"/config/topics/{topic}")[0])["config"]
    assert stored == {"retention.ms": "7777", "cleanup.policy": "delete,compact"}
    described = {c.name: c.value for c in describe_topic_configs(cluster.address(1), topic).configs}
    assert described["retention.ms"] == "7777"
    cluster.wait_for(lambda: f"reloaded the config overrides of topic {topic}" in cluster.broker(1).log_tail(200),
                     "broker 1 to reload the topic's configs")
    bad = incremental_alter_configs(cluster.address(2), topic, [("retention.ms", OP_APPEND, "1")])
    assert bad.error_code == E.INVALID_REQUEST
    assert incremental_alter_configs(cluster.address(2), "nothing", [("retention.ms", OP_SET, "1")]).error_code == (
        E.UNKNOWN_TOPIC_OR_PARTITION
    )


def test_preferred_elections_say_when_none_is_needed_or_possible(
    cluster: ClusterForTests, controller: FakeController, topic_name
) -> None:
    topic = topic_name()
    announce(cluster, controller, [
        PartitionSpec(topic, 0, 1, replicas=(1, 2)),           # led by its preferred replica
        PartitionSpec(topic, 1, 1, replicas=(2, 1)),           # can move back to 2
        PartitionSpec(topic, 2, 1, replicas=(3, 1), isr=(1,)),  # preferred replica 3 is not alive
    ])
    tps = [TopicPartition(topic, p) for p in range(3)] + [TopicPartition(topic, 9)]

    def move_back() -> None:
        announce(cluster, controller, [PartitionSpec(topic, 1, 2, leader_epoch=1, replicas=(2, 1))])
        cluster.zk.delete("/admin/preferred_replica_election")

    reacting = when(lambda: cluster.zk.exists("/admin/preferred_replica_election"), move_back)
    errors = election_errors(elect_preferred_leaders(cluster.address(1), tps))
    reacting.join()
    assert errors == {
        tps[0]: E.ELECTION_NOT_NEEDED, tps[1]: E.NONE, tps[2]: E.PREFERRED_LEADER_NOT_AVAILABLE,
        tps[3]: E.UNKNOWN_TOPIC_OR_PARTITION,
    }
    everything = election_errors(elect_preferred_leaders(cluster.address(2), None))
    assert tps[0] not in everything and tps[1] not in everything
    assert everything[tps[2]] == E.PREFERRED_LEADER_NOT_AVAILABLE


def test_reassignments_are_written_listed_and_cancelled(cluster: ClusterForTests, controller: FakeController,
                                                        topic_name) -> None:
    topic = topic_name()
    announce(cluster, controller, [PartitionSpec(topic, p, 1, replicas=(1,)) for p in (0, 1)])
    t0, t1, t9 = TopicPartition(topic, 0), TopicPartition(topic, 1), TopicPartition(topic, 9)
    assert alter_reassignments(cluster.address(2), {t0: [2], t1: [1, 7], t9: [1]}) == {
        t0: E.NONE, t1: E.INVALID_REPLICA_ASSIGNMENT, t9: E.UNKNOWN_TOPIC_OR_PARTITION,
    }
    pending = json.loads(cluster.zk.get("/admin/reassign_partitions")[0])["partitions"]
    assert pending == [{"topic": topic, "partition": 0, "replicas": [2]}]
    assert list_reassignments(cluster.address(1))[t0] == ([2, 1], [2], [1])
    assert alter_reassignments(cluster.address(1), {t0: None, t1: None}) == {
        t0: E.NONE, t1: E.NO_REASSIGNMENT_IN_PROGRESS,
    }
    assert cluster.zk.exists("/admin/reassign_partitions") is None
    assert t0 not in list_reassignments(cluster.address(1))


def test_metadata_for_an_unknown_topic_requests_its_creation(cluster: ClusterForTests, controller, topic_name) -> None:
    topic = topic_name()
    body = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)], allow_auto_topic_creation=True)
    answer = call(cluster.address(1), ApiKey.METADATA, 8, body)
    assert answer.topics[0].error_code == E.LEADER_NOT_AVAILABLE
    cluster.wait_for(lambda: cluster.zk.exists(f"/brokers/topics/{topic}"), "the auto-created topic's znode")
    body = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic_name("no"))],
                           allow_auto_topic_creation=False)
    assert call(cluster.address(1), ApiKey.METADATA, 8, body).topics[0].error_code == E.UNKNOWN_TOPIC_OR_PARTITION


def test_a_topic_named_twice_in_one_request_is_created_once(cluster: ClusterForTests, controller, topic_name) -> None:
    Q = CreateTopicsRequest
    topic = topic_name()
    entry = Q.CreatableTopic(name=topic, num_partitions=1, replication_factor=1, assignments=[], configs=[])
    answer = call(cluster.address(1), ApiKey.CREATE_TOPICS, 4, Q(topics=[entry, entry], timeout_ms=200))
    assert [t.error_code for t in answer.topics] == [E.REQUEST_TIMED_OUT, E.TOPIC_ALREADY_EXISTS]
