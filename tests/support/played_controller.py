"""The test as the controller of a cluster whose ``/controller`` it holds.

A real controller tells each replica its partitions' leaders with LeaderAndIsr
and every live broker the cluster's state with UpdateMetadata; these helpers
send the same requests, built by :class:`FakeController`, to the brokers of a
:class:`ClusterForTests`.
"""

from __future__ import annotations

from spate.protocol.errors import ErrorCode
from spate.protocol.messages.leader_and_isr import LeaderAndIsrRequest
from tests.support.cluster import ClusterForTests
from tests.support.controller_requests import (
    Broker,
    FakeController,
    PartitionSpec,
    send_leader_and_isr,
    send_update_metadata,
)


def live_brokers(cluster: ClusterForTests) -> list[Broker]:
    """The live brokers as the controller lists them, each with the rack it was started with."""
    return [Broker(i, "127.0.0.1", cluster.broker(i).port, rack=cluster.broker(i).overrides.get("broker.rack"))
            for i in cluster.live_ids()]


def update_metadata(cluster: ClusterForTests, controller: FakeController, specs: list[PartitionSpec]) -> None:
    """UpdateMetadata with ``specs`` to every live broker; each must accept it."""
    for broker_id in cluster.live_ids():
        body = controller.update_metadata(live_brokers(cluster), specs)
        assert send_update_metadata(cluster.address(broker_id), body).error_code == ErrorCode.NONE


def leader_and_isr(cluster: ClusterForTests, controller: FakeController, specs: list[PartitionSpec], *,
                   to: list[int] | None = None, live_leaders: bool = True, every_partition: bool = True) -> None:
    """LeaderAndIsr to each replica named (or to ``to``), each accepting the request and, with
    ``every_partition``, each of its partitions (a partition already at that leader epoch is refused).

    The request lists the leaders' endpoints as Kafka's controller does;
    without ``live_leaders`` the brokers find them in their metadata cache.
    """
    for broker_id in to if to is not None else sorted({r for spec in specs for r in spec.replica_list}):
        body = controller.leader_and_isr([spec for spec in specs if broker_id in spec.replica_list])
        if live_leaders:
            body.live_leaders = [
                LeaderAndIsrRequest.LeaderAndIsrLiveLeader(broker_id=b, host_name="127.0.0.1",
                                                           port=cluster.broker(b).port)
                for b in sorted({spec.leader for spec in specs})
            ]
        response = send_leader_and_isr(cluster.address(broker_id), body)
        assert response.error_code == ErrorCode.NONE
        if every_partition:
            assert all(p.error_code == ErrorCode.NONE for t in response.topics for p in t.partition_errors)


def announce(cluster: ClusterForTests, controller: FakeController, specs: list[PartitionSpec]) -> None:
    """What the controller does for new leaders: LeaderAndIsr to the live replicas of partitions that have a
    leader, then UpdateMetadata to every live broker. Partitions announced again keep their leader."""
    live = set(cluster.live_ids())
    led = [spec for spec in specs if spec.leader >= 0]
    leader_and_isr(cluster, controller, led, to=sorted({r for spec in led for r in spec.replica_list} & live),
                   every_partition=False)
    update_metadata(cluster, controller, specs)
