"""A broker's log dir fails: the controller learns which replicas it took and moves their leadership."""

from __future__ import annotations

from broker_core.cluster.zk.partition_state_zk import PartitionStateZk
from broker_core.cluster.zk.znodes.notifications import LogDirEventNotificationsZNode
from spate.structs import TopicPartition
from tests.broker.controller.conftest import WAIT_S, ControllerCluster
from tests.support.zookeeper import wait_until


def test_replicas_on_a_failed_log_dir_leave_the_isr_and_their_leadership_moves(cluster: ControllerCluster):
    for broker_id in (1, 2, 3):
        cluster.add_broker(broker_id)
    controller = cluster.controller()
    victim = next(b for b in (1, 2, 3) if b != controller.broker_id)
    others = [b for b in (1, 2, 3) if b != victim]
    cluster.create_topic("disks", {0: (victim, *others), 1: (victim, *others), 2: (others[0], victim, others[1])})
    failed, kept, followed = (TopicPartition("disks", p) for p in range(3))
    for tp in (failed, kept, followed):
        cluster.wait_for_state(tp, lambda s: s.leader >= 0, f"a leader for {tp}")
    broker = cluster.brokers[victim]
    broker.failed_log_dir = {failed, followed}
    PartitionStateZk(cluster.admin).notify_log_dir_failure(victim)

    moved = cluster.wait_for_state(failed, lambda s: s.leader == others[0], "leadership to move off the failed dir")
    assert victim not in moved.isr and moved.leader_epoch == 1
    shrunk = cluster.wait_for_state(followed, lambda s: victim not in s.isr, "the failed follower to leave the ISR")
    assert shrunk.leader == others[0]
    # The broker's other replica is on a healthy dir: still its leader, still in sync.
    assert (cluster.state(kept).leader, victim in cluster.state(kept).isr) == (victim, True)
    wait_until(lambda: (s := controller.metadata_state(failed)) is not None and s.offline_replicas == [victim],
               "metadata naming the offline replica", WAIT_S)
    wait_until(lambda: not cluster.admin.get_children(LogDirEventNotificationsZNode.path()),
               "the notification to be consumed", WAIT_S)


def test_a_restarted_broker_whose_dir_works_again_hosts_its_replica_again(cluster: ControllerCluster):
    for broker_id in (1, 2):
        cluster.add_broker(broker_id)
    controller = cluster.controller()
    victim = 2 if controller.broker_id == 1 else 1
    tp = TopicPartition("healed", 0)
    cluster.create_topic("healed", {0: (victim, controller.broker_id)})
    cluster.wait_for_state(tp, lambda s: s.leader == victim, "the preferred leader")
    cluster.brokers[victim].failed_log_dir = {tp}
    PartitionStateZk(cluster.admin).notify_log_dir_failure(victim)
    cluster.wait_for_state(tp, lambda s: s.leader == controller.broker_id, "leadership to move")
    wait_until(lambda: controller.metadata_state(tp).offline_replicas == [victim], "the replica offline", WAIT_S)

    cluster.brokers[victim].kill()
    restarted = cluster.add_broker(victim)  # a new process, whose log dir works again
    wait_until(lambda: any(s.leader == controller.broker_id for s in restarted.leader_and_isr_for(tp)),
               "the restarted broker to follow its replica again", WAIT_S)
    wait_until(lambda: controller.metadata_state(tp).offline_replicas == [], "the replica back online", WAIT_S)
