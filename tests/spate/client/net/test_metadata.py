"""The metadata snapshot and when the client refreshes it."""

from __future__ import annotations

import threading

import pytest

from spate.client.net.metadata import Metadata, snapshot_from_response
from spate.protocol import ErrorCode
from spate.protocol.messages.metadata import MetadataResponse as R
from spate.structs import TopicPartition


def partition(index: int, leader: int, error: ErrorCode = ErrorCode.NONE, epoch: int = 3):
    return R.MetadataResponsePartition(
        error_code=error, partition_index=index, leader_id=leader, leader_epoch=epoch, replica_nodes=[1, 2], isr_nodes=[1]
    )


def response(*topics) -> R:
    return R(
        brokers=[R.MetadataResponseBroker(node_id=1, host="h1", port=9092), R.MetadataResponseBroker(node_id=2, host="h2", port=9093)],
        cluster_id="c",
        controller_id=2,
        topics=list(topics),
    )


def topic(name: str, *partitions, error: ErrorCode = ErrorCode.NONE, internal: bool = False):
    return R.MetadataResponseTopic(error_code=error, name=name, is_internal=internal, partitions=list(partitions))


def test_snapshot_indexes_leaders_epochs_and_partition_counts() -> None:
    snap = snapshot_from_response(response(topic("t", partition(1, 2), partition(0, 1))))
    assert snap.partition_count("t") == 2
    assert (snap.leader("t", 0), snap.leader("t", 1)) == (1, 2)
    assert snap.leader_epoch("t", 1) == 3
    assert snap.topics["t"].partitions[0].replicas == (1, 2)
    assert snap.describe_cluster().controller.host == "h2"


def test_unknown_topics_and_partitions_have_no_leader() -> None:
    snap = snapshot_from_response(response(topic("t", partition(0, 1))))
    assert snap.leader("t", 5) == -1 and snap.leader("nope", 0) == -1
    assert snap.partition_count("nope") is None


def test_a_partition_without_a_leader_is_not_available() -> None:
    snap = snapshot_from_response(
        response(topic("t", partition(0, 1), partition(1, -1, ErrorCode.LEADER_NOT_AVAILABLE)))
    )
    assert snap.available_partitions("t") == (0,)
    assert snap.leader("t", 1) == -1


def test_topic_errors_are_kept_apart_from_described_topics() -> None:
    snap = snapshot_from_response(
        response(topic("gone", error=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), topic("bad!", error=ErrorCode.INVALID_TOPIC_EXCEPTION))
    )
    assert snap.topics == {}
    assert snap.topic_errors == {"gone": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "bad!": ErrorCode.INVALID_TOPIC_EXCEPTION}


def test_a_topic_with_holes_in_its_partition_numbers_is_not_trusted() -> None:
    snap = snapshot_from_response(response(topic("t", partition(0, 1), partition(2, 1))))
    assert snap.partition_count("t") is None
    assert snap.topic_errors["t"] == ErrorCode.LEADER_NOT_AVAILABLE


def test_a_refresh_is_due_at_first_then_after_max_age() -> None:
    metadata = Metadata(max_age=300.0, refresh_backoff=0.1, clock=lambda: 0.0)
    assert metadata.time_to_update(0.0) == 0.0
    metadata.update(snapshot_from_response(response()), 10.0)
    assert metadata.time_to_update(10.0) == pytest.approx(300.0)
    assert metadata.time_to_update(310.0) == 0.0


def test_a_requested_refresh_still_respects_the_backoff() -> None:
    metadata = Metadata(max_age=300.0, refresh_backoff=0.5, clock=lambda: 0.0)
    metadata.attempted(10.0)
    metadata.update(snapshot_from_response(response()), 10.1)
    metadata.request_update()
    assert metadata.time_to_update(10.2) == pytest.approx(0.3)
    assert metadata.time_to_update(10.5) == 0.0


def test_a_new_topic_is_asked_about_at_once_but_asking_again_respects_the_backoff() -> None:
    # A producer's first send to a topic waits for its metadata: the refresh made at start-up must not
    # hold that question back by a whole backoff (Kafka's requestUpdateForNewTopics).
    metadata = Metadata(max_age=300.0, refresh_backoff=0.5, clock=lambda: 0.0)
    metadata.attempted(10.0)
    metadata.update(snapshot_from_response(response()), 10.1)
    assert metadata.add_topics(["orders"])
    assert metadata.time_to_update(10.2) == 0.0
    metadata.attempted(10.2)
    metadata.update(snapshot_from_response(response(topic("orders", error=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))),
                    10.3)
    assert not metadata.add_topics(["orders"])
    assert metadata.time_to_update(10.3) == pytest.approx(0.4)


def test_wanted_topics_that_are_missing_keep_refreshes_coming() -> None:
    metadata = Metadata(max_age=300.0, refresh_backoff=0.0, clock=lambda: 0.0)
    metadata.add_topics(["t"])
    metadata.update(snapshot_from_response(response(topic("t", error=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))), 1.0)
    assert metadata.update_requested
    metadata.update(snapshot_from_response(response(topic("t", partition(0, 1)))), 2.0)
    assert not metadata.update_requested


def test_adding_a_known_topic_does_not_request_a_refresh() -> None:
    metadata = Metadata(max_age=300.0, refresh_backoff=0.0, clock=lambda: 0.0)
    assert metadata.add_topics(["t"])
    metadata.update(snapshot_from_response(response(topic("t", partition(0, 1)))), 1.0)
    assert not metadata.add_topics(["t"])
    assert not metadata.update_requested


def test_waiters_wake_on_a_refresh_from_another_thread() -> None:
    metadata = Metadata(max_age=300.0, refresh_backoff=0.0, clock=lambda: 0.0)
    seen = metadata.version
    timer = threading.Timer(0.05, lambda: metadata.update(snapshot_from_response(response()), 1.0))
    timer.start()
    assert metadata.wait_for_change(seen, 5.0)
    assert not metadata.wait_for_change(metadata.version, 0.01)


def test_partitions_split_by_leader_keep_their_order_and_the_leaderless_come_apart() -> None:
    snap = snapshot_from_response(response(topic("t", partition(0, 1), partition(1, 2), partition(2, -1))))
    wanted = [TopicPartition("t", 1), TopicPartition("t", 0), TopicPartition("t", 2), TopicPartition("gone", 0),
              TopicPartition("t", 9)]
    by_leader, leaderless = snap.by_leader(wanted)
    assert by_leader == {2: [TopicPartition("t", 1)], 1: [TopicPartition("t", 0)]}
    assert leaderless == [TopicPartition("t", 2), TopicPartition("gone", 0), TopicPartition("t", 9)]
