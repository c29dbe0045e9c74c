"""A broker leaving by controlled shutdown leaves every ISR, even when a leader's ISR expansion races the shutdown.

In ZooKeeper mode the leader writes its ISR changes itself and cannot tell a
broker that is shutting down from one that caught up; the controller is the
one that knows, so it takes such a replica out again (Kafka's controller
refuses shutting-down replicas in an ISR change), and when the broker is gone
it removes it from the ISR as it stands in ZooKeeper, not as it last heard it.
"""

from __future__ import annotations

from spate.protocol import ApiKey
from spate.structs import TopicPartition
from tests.broker.controller.conftest import WAIT_S, ControllerCluster
from tests.broker.controller.test_controller import _expand_isr
from tests.support.zookeeper import wait_until


def _shut_down_follower(cluster: ControllerCluster) -> tuple[int, int, TopicPartition]:
    """Three brokers, a partition led by the controller's broker; another broker shuts down: (leader, leaving, tp)."""
    for broker_id in (1, 2, 3):
        cluster.add_broker(broker_id)
    controller = cluster.controller()
    leader = controller.broker_id
    leaving, staying = [b for b in (1, 2, 3) if b != leader]
    tp = TopicPartition("idle", 0)
    cluster.create_topic("idle", {0: (leader, leaving, staying)})
    cluster.wait_for_state(tp, lambda s: s.leader == leader and len(s.isr) == 3, "a leader with a full ISR")
    assert controller.controller.controlled_shutdown(leaving, -1).result(timeout=WAIT_S) == []
    cluster.wait_for_state(tp, lambda s: leaving not in s.isr, "the leaving broker to leave the ISR")
    return leader, leaving, tp


def test_the_controller_takes_a_shutting_down_replica_out_of_an_isr_a_leader_expanded(cluster: ControllerCluster):
    leader, leaving, tp = _shut_down_follower(cluster)
    _expand_isr(cluster, tp, leaving)  # a fetch the leaving broker sent before it stopped its fetchers
    state = cluster.wait_for_state(tp, lambda s: leaving not in s.isr, "the controller to take it out again")
    assert state.leader == leader


def test_a_stopped_broker_leaves_the_isr_the_leader_wrote_even_before_the_controller_heard_of_it(
    cluster: ControllerCluster,
):
    leader, leaving, tp = _shut_down_follower(cluster)
    _rewrite_without_notification(cluster, tp, leaving)
    cluster.brokers[leaving].kill()
    state = cluster.wait_for_state(tp, lambda s: leaving not in s.isr, "the stopped broker to leave the ISR")
    assert state.leader == leader


def test_the_replica_taken_offline_is_not_told_to_follow_again(cluster: ControllerCluster):
    leader, leaving, tp = _shut_down_follower(cluster)
    broker = cluster.brokers[leaving]
    wait_until(lambda: any(p.partition_index == tp.partition for body in broker.received(ApiKey.STOP_REPLICA)
                           for t in body.topic_states for p in t.partition_states), "a StopReplica", WAIT_S)
    wait_until(lambda: cluster.brokers[leader].leader_and_isr_for(tp)[-1].leader_epoch == 1,
               "the leader to hear of the new ISR", WAIT_S)
    # Only the LeaderAndIsr that started it, none with the epoch that dropped it from the ISR.
    assert [state.leader_epoch for state in broker.leader_and_isr_for(tp)] == [0]


def _rewrite_without_notification(cluster: ControllerCluster, tp: TopicPartition, broker_id: int) -> None:
    """The leader's ISR write landed, its change notification not yet (the controller still knows the old ISR)."""
    from broker_core.cluster.zk.znodes import LeaderIsrAndControllerEpoch, TopicPartitionStateZNode

    path = TopicPartitionStateZNode.path(tp.topic, tp.partition)
    data, stat = cluster.admin.get(path)
    state = TopicPartitionStateZNode.decode(tp.topic, tp.partition, data)
    grown = LeaderIsrAndControllerEpoch(state.leader, state.leader_epoch, (*state.isr, broker_id),
                                        state.controller_epoch)
    cluster.admin.set(path, TopicPartitionStateZNode.encode(grown), version=stat.version)
    wait_until(lambda: broker_id in cluster.state(tp).isr, "the write to land", WAIT_S)


