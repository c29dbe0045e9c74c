"""The controller decides leadership and tells every broker: topics, broker failures, deletion, failover."""

from __future__ import annotations

import pytest
from kazoo.exceptions import ConnectionLoss

from broker_core.cluster.zk.controller_zk import ControllerZk
from spate.protocol import ApiKey
from spate.structs import TopicPartition
from tests.broker.controller.conftest import WAIT_S, ControllerCluster
from tests.support.zookeeper import wait_until


def test_a_new_topic_gets_its_first_live_replica_as_leader_and_every_broker_hears_it(cluster: ControllerCluster):
    for broker_id in (1, 2, 3):
        cluster.add_broker(broker_id)
    cluster.controller()
    cluster.create_topic("orders", {0: (1,), 1: (2,), 2: (3,)})
    for partition, leader in enumerate((1, 2, 3)):
        tp = TopicPartition("orders", partition)
        state = cluster.wait_for_state(tp, lambda s: s.leader >= 0, f"a leader for {tp}")
        assert (state.leader, state.leader_epoch, state.isr) == (leader, 0, (leader,))
        wait_until(lambda: cluster.brokers[leader].leader_and_isr_for(tp), f"LeaderAndIsr for {tp}", WAIT_S)
        assert cluster.brokers[leader].leader_and_isr_for(tp)[-1].is_new
        for broker in cluster.brokers.values():
            wait_until(lambda: broker.metadata_leader(tp) == leader, f"broker {broker.broker_id} to learn {tp}", WAIT_S)


def test_a_dead_leader_leaves_its_unreplicated_partition_offline_until_it_returns(cluster: ControllerCluster):
    for broker_id in (1, 2):
        cluster.add_broker(broker_id)
    controller = cluster.controller()
    other = 2 if controller.broker_id == 1 else 1
    cluster.create_topic("lonely", {0: (other,)})
    tp = TopicPartition("lonely", 0)
    cluster.wait_for_state(tp, lambda s: s.leader == other, "a leader")
    cluster.brokers[other].kill()
    offline = cluster.wait_for_state(tp, lambda s: s.leader == -1, "the partition to go offline")
    assert offline.isr == (other,) and offline.leader_epoch == 1
    wait_until(lambda: controller.metadata_leader(tp) == -1, "the controller's broker to learn it", WAIT_S)
    cluster.add_broker(other)
    back = cluster.wait_for_state(tp, lambda s: s.leader == other, "the leader to return")
    assert back.leader_epoch == 2


def test_a_replicated_partition_fails_over_to_an_in_sync_replica(cluster: ControllerCluster):
    for broker_id in (1, 2, 3):
        cluster.add_broker(broker_id)
    controller = cluster.controller()
    followers = [b for b in (1, 2, 3) if b != controller.broker_id]
    tp = TopicPartition("replicated", 0)
    cluster.create_topic("replicated", {0: (followers[0], followers[1], controller.broker_id)})
    cluster.wait_for_state(tp, lambda s: s.leader == followers[0], "the preferred leader")
    cluster.brokers[followers[0]].kill()
    state = cluster.wait_for_state(tp, lambda s: s.leader == followers[1], "the next in-sync replica to lead")
    assert state.isr == (followers[1], controller.broker_id) and state.leader_epoch == 1
    wait_until(lambda: cluster.brokers[followers[1]].leader_and_isr_for(tp)[-1].leader == followers[1],
               "the new leader to be told", WAIT_S)


def test_deleting_a_topic_deletes_every_replica_and_then_its_znodes(cluster: ControllerCluster):
    for broker_id in (1, 2):
        cluster.add_broker(broker_id)
    cluster.controller()
    cluster.create_topic("doomed", {0: (1, 2), 1: (2, 1)})
    cluster.wait_for_state(TopicPartition("doomed", 1), lambda s: s.leader == 2, "leaders")
    cluster.delete_topic("doomed")
    wait_until(lambda: not cluster.exists("/brokers/topics/doomed"), "the topic's znodes to go", WAIT_S)
    assert not cluster.exists("/admin/delete_topics/doomed")
    for broker in cluster.brokers.values():
        assert broker.deleted(TopicPartition("doomed", 0)) and broker.deleted(TopicPartition("doomed", 1))
        assert broker.metadata_leader(TopicPartition("doomed", 0)) == -2


def test_a_deletion_waits_for_a_dead_replica_and_finishes_when_its_broker_returns(cluster: ControllerCluster):
    for broker_id in (1, 2, 3):
        cluster.add_broker(broker_id)
    controller = cluster.controller()
    away = next(b for b in (1, 2, 3) if b != controller.broker_id)
    cluster.create_topic("patient", {0: (controller.broker_id, away)})
    cluster.wait_for_state(TopicPartition("patient", 0), lambda s: s.leader >= 0, "a leader")
    cluster.brokers[away].kill()
    cluster.delete_topic("patient")
    wait_until(lambda: controller.deleted(TopicPartition("patient", 0)), "the live replica's deletion", WAIT_S)
    assert cluster.exists("/brokers/topics/patient"), "the dead broker's replica is not deleted yet"
    returned = cluster.add_broker(away)
    wait_until(lambda: not cluster.exists("/brokers/topics/patient"), "the deletion to finish", WAIT_S)
    assert returned.deleted(TopicPartition("patient", 0))


def test_added_partitions_get_leaders(cluster: ControllerCluster):
    cluster.add_broker(1)
    cluster.controller()
    cluster.create_topic("growing", {0: (1,)})
    cluster.wait_for_state(TopicPartition("growing", 0), lambda s: s.leader == 1, "a leader")
    cluster.add_partitions("growing", {1: (1,), 2: (1,)})
    for partition in (1, 2):
        cluster.wait_for_state(TopicPartition("growing", partition), lambda s: s.leader == 1, "the new partition's leader")


def test_a_topic_created_while_zookeeper_fails_the_controller_gets_a_leader_once_it_answers_again(
    cluster: ControllerCluster,
):
    cluster.add_broker(1)
    controller = cluster.controller().controller
    # Once a topic has its leader, the controller's start-up is over: the failure below meets the new topic.
    cluster.create_topic("settled", {0: (1,)})
    cluster.wait_for_state(TopicPartition("settled", 0), lambda s: s.leader == 1, "the first topic's leader")
    zk = controller._zk
    read_assignments = zk.topic_assignments
    failures: list[str] = []

    def failing_once(names, **kwargs):
        if not failures:
            failures.append("connection lost")
            raise ConnectionLoss()
        return read_assignments(names, **kwargs)

    zk.topic_assignments = failing_once
    cluster.create_topic("unlucky", {0: (1,)})
    cluster.wait_for_state(TopicPartition("unlucky", 0), lambda s: s.leader == 1, "a leader despite the failure")
    assert failures == ["connection lost"]


def test_a_controller_whose_start_meets_a_zookeeper_failure_starts_again(
    cluster: ControllerCluster, monkeypatch: pytest.MonkeyPatch
):
    cluster.create_topic("early", {0: (1,)})
    read_assignments = ControllerZk.topic_assignments
    failures: list[str] = []

    def failing_once(self, names, **kwargs):
        if not failures:
            failures.append("connection lost")
            raise ConnectionLoss()
        return read_assignments(self, names, **kwargs)

    monkeypatch.setattr(ControllerZk, "topic_assignments", failing_once)
    cluster.add_broker(1)
    cluster.wait_for_state(TopicPartition("early", 0), lambda s: s.leader == 1, "a leader after the failed start")
    assert failures == ["connection lost"]


def test_a_new_controller_takes_over_and_tells_every_broker_everything(cluster: ControllerCluster):
    for broker_id in (1, 2, 3):
        cluster.add_broker(broker_id)
    first = cluster.controller()
    cluster.create_topic("kept", {0: (1,), 1: (2,), 2: (3,)})
    for partition in range(3):
        cluster.wait_for_state(TopicPartition("kept", partition), lambda s: s.leader >= 0, "leaders")
    epoch = first.controller.context.epoch
    first.kill()
    second = wait_until(
        lambda: next((b for b in cluster.brokers.values() if b.controller is not None and b is not first), None),
        "another controller", WAIT_S,
    )
    assert second.controller.context.epoch == epoch + 1
    survivors = [b for b in cluster.brokers.values() if b is not first]
    for broker in survivors:
        wait_until(
            lambda: any(body.controller_epoch == epoch + 1 and body.type == 2
                        for body in broker.received(ApiKey.LEADER_AND_ISR)),
            f"a full LeaderAndIsr from the new controller on broker {broker.broker_id}", WAIT_S,
        )
    dead_partition = TopicPartition("kept", first.broker_id - 1)
    for broker in survivors:
        wait_until(lambda: broker.metadata_leader(dead_partition) == -1,
                   f"broker {broker.broker_id} to learn that the old controller's partition has no leader", WAIT_S)
    returned = cluster.add_broker(first.broker_id)
    state = cluster.wait_for_state(dead_partition, lambda s: s.leader_epoch > 0, "the returning broker to lead")
    assert state.leader == first.broker_id and state.controller_epoch == epoch + 1
    assert returned.controller is None, "the old controller rejoins as a plain broker"


def test_a_preferred_leader_election_moves_leadership_back_to_the_first_replica(cluster: ControllerCluster):
    for broker_id in (1, 2, 3):
        cluster.add_broker(broker_id)
    controller = cluster.controller()
    preferred = next(b for b in (1, 2, 3) if b != controller.broker_id)
    others = [b for b in (1, 2, 3) if b != preferred]
    tp = TopicPartition("balanced", 0)
    cluster.create_topic("balanced", {0: (preferred, *others)})
    cluster.wait_for_state(tp, lambda s: s.leader == preferred, "the preferred leader")
    cluster.brokers[preferred].kill()
    cluster.wait_for_state(tp, lambda s: s.leader == others[0], "a failover")
    cluster.add_broker(preferred)
    # Back, but not in the ISR: with no replication yet, put it back in sync as a leader would.
    _expand_isr(cluster, tp, preferred)
    cluster.elect_preferred([tp])
    state = cluster.wait_for_state(tp, lambda s: s.leader == preferred, "the preferred leader to lead again")
    assert not cluster.exists("/admin/preferred_replica_election")
    assert state.leader_epoch >= 2


def test_a_controlled_shutdown_moves_leadership_of_replicated_partitions_away(cluster: ControllerCluster):
    for broker_id in (1, 2, 3):
        cluster.add_broker(broker_id)
    controller = cluster.controller()
    leaving = next(b for b in (1, 2, 3) if b != controller.broker_id)
    staying = [b for b in (1, 2, 3) if b != leaving]
    cluster.create_topic("moving", {0: (leaving, *staying)})
    cluster.create_topic("stuck", {0: (leaving,)})
    replicated, single = TopicPartition("moving", 0), TopicPartition("stuck", 0)
    cluster.wait_for_state(replicated, lambda s: s.leader == leaving, "a leader")
    cluster.wait_for_state(single, lambda s: s.leader == leaving, "a leader")
    remaining = controller.controller.controlled_shutdown(leaving, -1).result(timeout=WAIT_S)
    assert remaining == []  # unreplicated partitions cannot move and do not hold the shutdown up
    state = cluster.state(replicated)
    assert state.leader == staying[0] and leaving not in state.isr
    assert cluster.state(single).leader == leaving


def test_a_controlled_shutdown_of_an_unknown_broker_is_refused(cluster: ControllerCluster):
    cluster.add_broker(1)
    controller = cluster.controller()
    try:
        controller.controller.controlled_shutdown(9, -1).result(timeout=WAIT_S)
    except Exception as exc:  # noqa: BLE001
        assert "broker 9 is not registered" in str(exc)
    else:
        raise AssertionError("a controlled shutdown of an unregistered broker was accepted")


def test_reordering_replicas_completes_at_once_and_leaves_the_request(cluster: ControllerCluster):
    for broker_id in (1, 2):
        cluster.add_broker(broker_id)
    cluster.controller()
    tp = TopicPartition("reordered", 0)
    cluster.create_topic("reordered", {0: (1, 2)})
    cluster.wait_for_state(tp, lambda s: s.leader == 1, "a leader")
    cluster.reassign({tp: (2, 1)})
    wait_until(lambda: not cluster.exists("/admin/reassign_partitions"), "the reassignment to complete", WAIT_S)
    assert _assignment(cluster, "reordered") == {0: (2, 1)}


def test_a_reassignment_to_a_new_broker_waits_for_it_to_catch_up_then_drops_the_old_replica(cluster):
    for broker_id in (1, 2, 3):
        cluster.add_broker(broker_id)
    controller = cluster.controller()
    source, target = [b for b in (1, 2, 3) if b != controller.broker_id]
    tp = TopicPartition("moved", 0)
    cluster.create_topic("moved", {0: (source,)})
    cluster.wait_for_state(tp, lambda s: s.leader == source, "a leader")
    cluster.reassign({tp: (target,)})
    wait_until(lambda: _assignment(cluster, "moved") == {0: (target, source)}, "both replicas assigned", WAIT_S)
    wait_until(lambda: cluster.brokers[target].leader_and_isr_for(tp), "the new replica to be started", WAIT_S)
    assert cluster.exists("/admin/reassign_partitions")
    _expand_isr(cluster, tp, target)
    state = cluster.wait_for_state(tp, lambda s: s.leader == target, "the new replica to lead")
    wait_until(lambda: not cluster.exists("/admin/reassign_partitions"), "the reassignment to finish", WAIT_S)
    assert _assignment(cluster, "moved") == {0: (target,)} and target in state.isr
    wait_until(lambda: cluster.brokers[source].deleted(tp), "the old replica to be deleted", WAIT_S)


def test_a_reassignment_to_an_unknown_broker_is_refused_and_changes_nothing(cluster: ControllerCluster):
    cluster.add_broker(1)
    cluster.controller()
    tp = TopicPartition("fixed", 0)
    cluster.create_topic("fixed", {0: (1,)})
    cluster.wait_for_state(tp, lambda s: s.leader == 1, "a leader")
    cluster.reassign({tp: (7,)})
    wait_until(lambda: not cluster.exists("/admin/reassign_partitions"), "the request to be dropped", WAIT_S)
    assert _assignment(cluster, "fixed") == {0: (1,)}


def test_a_malformed_topic_znode_is_skipped_and_other_topics_still_get_leaders(cluster: ControllerCluster):
    cluster.add_broker(1)
    cluster.controller()
    cluster.admin.ensure_path("/brokers/topics")
    cluster.admin.create("/brokers/topics/garbage", b"{not json")
    cluster.create_topic("healthy", {0: (1,)})
    cluster.wait_for_state(TopicPartition("healthy", 0), lambda s: s.leader == 1, "the healthy topic's leader")


def test_a_deposed_controller_cannot_change_partition_state(cluster: ControllerCluster):
    for broker_id in (1, 2):
        cluster.add_broker(broker_id)
    first = cluster.controller()
    stale = first.controller
    cluster.create_topic("fenced", {0: (1,), 1: (2,)})
    cluster.wait_for_state(TopicPartition("fenced", 1), lambda s: s.leader == 2, "leaders")
    # Bump the epoch behind the controller's back, as a newer election does.
    from broker_core.cluster.zk.znodes import ControllerEpochZNode

    data, stat = cluster.admin.get(ControllerEpochZNode.path())
    cluster.admin.set(ControllerEpochZNode.path(), ControllerEpochZNode.encode(int(data) + 1), version=stat.version)
    other = 2 if first.broker_id == 1 else 1
    before = cluster.state(TopicPartition("fenced", other - 1))
    cluster.brokers[other].kill()
    wait_until(lambda: not stale.is_active(), "the stale controller to stop acting", WAIT_S)
    after = cluster.state(TopicPartition("fenced", other - 1))
    assert (after.leader, after.leader_epoch) == (before.leader, before.leader_epoch)


def test_an_unclean_election_happens_only_when_the_topic_allows_it(cluster: ControllerCluster):
    from broker_core.cluster.zk.znodes import TopicConfigZNode

    for broker_id in (1, 2, 3):
        cluster.add_broker(broker_id)
    controller = cluster.controller()
    a, b = [x for x in (1, 2, 3) if x != controller.broker_id]
    for name, unclean in (("strict", None), ("lenient", "true")):
        if unclean:
            cluster.admin.ensure_path("/config/topics")
            cluster.admin.create(TopicConfigZNode.path(name),
                                 TopicConfigZNode.encode({"unclean.leader.election.enable": unclean}))
        cluster.create_topic(name, {0: (a, b)})
        cluster.wait_for_state(TopicPartition(name, 0), lambda s: s.leader == a, "a leader")
    # b falls out of sync, then the leader dies: only b is left.
    for name in ("strict", "lenient"):
        _shrink_isr(cluster, TopicPartition(name, 0), b)
    cluster.brokers[a].kill()
    assert cluster.wait_for_state(TopicPartition("strict", 0), lambda s: s.leader == -1, "no leader").isr == (a,)
    lenient = cluster.wait_for_state(TopicPartition("lenient", 0), lambda s: s.leader == b, "an unclean leader")
    assert lenient.isr == (b,)


def _assignment(cluster: ControllerCluster, topic: str) -> dict[int, tuple[int, ...]]:
    from broker_core.cluster.zk.znodes import TopicZNode

    data, _ = cluster.admin.get(TopicZNode.path(topic))
    return dict(TopicZNode.decode(topic, data).partitions)


def _expand_isr(cluster: ControllerCluster, tp: TopicPartition, broker_id: int) -> None:
    _rewrite_isr(cluster, tp, lambda isr: (*isr, broker_id) if broker_id not in isr else isr)


def _shrink_isr(cluster: ControllerCluster, tp: TopicPartition, broker_id: int) -> None:
    _rewrite_isr(cluster, tp, lambda isr: tuple(b for b in isr if b != broker_id))


def _rewrite_isr(cluster: ControllerCluster, tp: TopicPartition, change) -> None:
    """What a partition leader does when its ISR changes: a conditional write, then a notification."""
    from broker_core.cluster.zk.znodes import (
        IsrChangeNotificationZNode,
        LeaderIsrAndControllerEpoch,
        TopicPartitionStateZNode,
    )

    path = TopicPartitionStateZNode.path(tp.topic, tp.partition)
    data, stat = cluster.admin.get(path)
    state = TopicPartitionStateZNode.decode(tp.topic, tp.partition, data)
    new = LeaderIsrAndControllerEpoch(state.leader, state.leader_epoch, change(state.isr), state.controller_epoch)
    cluster.admin.set(path, TopicPartitionStateZNode.encode(new), version=stat.version)
    cluster.admin.ensure_path("/isr_change_notification")
    cluster.admin.create(IsrChangeNotificationZNode.create_path(), IsrChangeNotificationZNode.encode([tp]),
                         sequence=True)
