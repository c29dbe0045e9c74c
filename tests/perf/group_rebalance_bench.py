"""Rebalance cost, classic vs consumer protocol (KIP-848), with members simulated over the wire.

Run: .venv/bin/python -m tests.perf.group_rebalance_bench

One broker process; each member is a raw-protocol connection (Spate's codec),
so hundreds of members cost no client threads. Members answer at once (no
heartbeat interval, no processing between rounds), so the figures are the
coordinator's own cost plus the round trips the protocol needs:

* classic: 100 members stable; one more joins (its JoinGroup, once it has
  its member id, starts the rebalance). Every member hears of it from its
  next heartbeat (all heartbeat at once, each on its own connection) and
  must rejoin (JoinGroup is parked until all have), the leader assigns, all
  SyncGroup: each member owns nothing from its rejoin until its SyncGroup
  answer.
* consumer: the same with ConsumerGroupHeartbeat; members heartbeat in
  rounds and apply what they are told at once. Only the members that give up
  a partition change anything.
* consumer, 1,000 members: one more joins; the slowest single heartbeat (a
  pause would show there), and how many members lost any partition at all.
"""

from __future__ import annotations

import selectors
import tempfile
import time
from pathlib import Path
from typing import Any

from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest as HB
from spate.protocol.messages.heartbeat import HeartbeatRequest
from spate.protocol.messages.join_group import JoinGroupRequest
from spate.protocol.messages.metadata import MetadataRequest
from spate.protocol.messages.sync_group import SyncGroupRequest
from tests.perf.measurements import cpu_seconds
from tests.support.admin_requests import create_topic, find_group_coordinator
from tests.support.broker_process import BrokerProcess, running_broker
from tests.support.raw_client import RawClient

PARTITIONS = 1200
DEADLINE_S = 120.0


def gather(wires: list[RawClient]) -> list[Any]:
    """The next response of each wire, whichever answers first (parked JoinGroups answer together)."""
    selector = selectors.DefaultSelector()
    results: dict[int, Any] = {}
    for index, wire in enumerate(wires):
        selector.register(wire.sock, selectors.EVENT_READ, index)
    deadline = time.monotonic() + DEADLINE_S
    while len(results) < len(wires) and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=1):
            wire = wires[key.data]
            response = wire.codec.next_response()
            while response is None:
                wire.codec.receive_data(wire.sock.recv(1 << 20))
                response = wire.codec.next_response()
            results[key.data] = response.body
            selector.unregister(wire.sock)
    selector.close()
    if len(results) < len(wires):
        raise TimeoutError(f"{len(wires) - len(results)} responses missing after {DEADLINE_S}s")
    return [results[i] for i in range(len(wires))]


# --- classic ---------------------------------------------------------------------------------------

def _join(group: str, member_id: str) -> Any:
    return JoinGroupRequest(group_id=group, session_timeout_ms=60000, rebalance_timeout_ms=60000,
                            member_id=member_id, protocol_type="consumer",
                            protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")])


def classic_round(wires: list[RawClient], group: str, ids: list[str], *, parked: int = 0) -> tuple[list[str], int]:
    """Everyone (re)joins, then syncs; returns member ids and the generation. The JoinGroups of the last
    ``parked`` members were sent already (they wait for the others)."""
    for wire, member_id in zip(wires[:len(wires) - parked], ids):
        wire.send(ApiKey.JOIN_GROUP, 5, _join(group, member_id))
    joined = gather(wires)
    ids = [r.member_id for r in joined]
    generation = joined[0].generation_id
    leader = joined[0].leader
    for wire, member_id in zip(wires, ids):
        assignments = []
        if member_id == leader:
            assignments = [SyncGroupRequest.SyncGroupRequestAssignment(member_id=m, assignment=b"")
                           for m in ids]
        wire.send(ApiKey.SYNC_GROUP, 3, SyncGroupRequest(group_id=group, generation_id=generation,
                                                          member_id=member_id, assignments=assignments))
    errors = [r.error_code for r in gather(wires)]
    assert not any(errors), errors
    return ids, generation


def classic_join_one(bootstrap: str, members: int, broker_pid: int | None = None) -> dict[str, float]:
    """Seconds from the newcomer's JoinGroup until every member has its assignment, and the CPU seconds
    the broker (given its pid) and this load generator used meanwhile."""
    group = f"classic-{members}"
    wires = [RawClient(bootstrap, "spate-bench", timeout=60) for _ in range(members + 1)]
    # Members get their ids first (JoinGroup v5 answers MEMBER_ID_REQUIRED), then form the group
    # (group.initial.rebalance.delay.ms lets all of them in; it delays only a new group's first rebalance).
    ids = [w.call(ApiKey.JOIN_GROUP, 5, _join(group, "")).member_id for w in wires[:members]]
    ids, generation = classic_round(wires[:members], group, ids)
    cpu = _cpu_now(broker_pid)
    start = time.perf_counter()
    newcomer = wires[members].call(ApiKey.JOIN_GROUP, 5, _join(group, "")).member_id  # MEMBER_ID_REQUIRED
    wires[members].send(ApiKey.JOIN_GROUP, 5, _join(group, newcomer))  # parked; the rebalance starts
    # The others learn of the rebalance from their heartbeat, then all rejoin and sync. Each member
    # heartbeats on its own connection, all at once as independent consumers would, rather than one
    # after another: the wait for each answer would time the load generator, not the coordinator.
    for wire, member_id in zip(wires[:members], ids):
        wire.send(ApiKey.HEARTBEAT, 3, HeartbeatRequest(group_id=group, generation_id=generation,
                                                          member_id=member_id))
    errors = {r.error_code for r in gather(wires[:members])}
    assert errors == {ErrorCode.REBALANCE_IN_PROGRESS}, errors
    classic_round(wires, group, ids + [newcomer], parked=1)
    elapsed = time.perf_counter() - start
    for wire in wires:
        wire.sock.close()
    return {"seconds": elapsed, **_cpu_since(cpu, broker_pid)}


# --- consumer (KIP-848) ----------------------------------------------------------------------------

class Member:
    def __init__(self, wire: RawClient, group: str, topic_id: Any, member_id: str) -> None:
        self.wire, self.group, self.topic_id, self.member_id = wire, group, topic_id, member_id
        self.epoch = 0
        self.owned: set[int] = set()
        self.lost_any = False

    def request(self, topic: str) -> Any:
        return HB(group_id=self.group, member_id=self.member_id, member_epoch=self.epoch,
                  rebalance_timeout_ms=60000 if self.epoch == 0 else -1,
                  subscribed_topic_names=[topic] if self.epoch == 0 else None,
                  topic_partitions=[HB.TopicPartitions(topic_id=self.topic_id, partitions=sorted(self.owned))])

    def apply(self, response: Any) -> None:
        assert response.error_code == 0, response
        self.epoch = response.member_epoch
        if response.assignment is not None:
            new = {p for tp in response.assignment.topic_partitions for p in tp.partitions}
            self.lost_any |= bool(self.owned - new)
            self.owned = new


def heartbeat_round(members: list[Member], topic: str) -> float:
    """Every member heartbeats once, one after another; returns the slowest heartbeat's latency in seconds."""
    slowest = 0.0
    for m in members:
        start = time.perf_counter()
        m.apply(m.wire.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, m.request(topic)))
        slowest = max(slowest, time.perf_counter() - start)
    return slowest


def settled(members: list[Member]) -> bool:
    owned = [p for m in members for p in m.owned]
    epochs = {m.epoch for m in members}
    return len(epochs) == 1 and sorted(owned) == list(range(PARTITIONS)) and all(m.owned for m in members)


def consumer_join_one(bootstrap: str, topic: str, topic_id: Any, members: int,
                      broker_pid: int | None = None) -> dict[str, float]:
    """As :func:`classic_join_one`, with the figures of :func:`heartbeat_round` besides."""
    group = f"consumer-{members}"
    # One connection for all: the coordinator tells members apart by member id.
    wire = RawClient(bootstrap, "spate-bench", timeout=60)
    everyone = [Member(wire, group, topic_id, f"m-{i}") for i in range(members)]
    for _ in range(50):
        heartbeat_round(everyone, topic)
        if settled(everyone):
            break
    for m in everyone:
        m.lost_any = False
    newcomer = Member(wire, group, topic_id, "newcomer")
    everyone.append(newcomer)
    cpu = _cpu_now(broker_pid)
    start = time.perf_counter()
    rounds, slowest = 0, 0.0
    while not settled(everyone) and rounds < 50:
        slowest = max(slowest, heartbeat_round(everyone, topic))
        rounds += 1
    elapsed = time.perf_counter() - start
    wire.sock.close()
    return {"seconds": elapsed, "rounds": rounds, "slowest_round_s": slowest, **_cpu_since(cpu, broker_pid),
            "members_losing_any": sum(m.lost_any for m in everyone[:-1]), "newcomer_owns": len(newcomer.owned)}


def _cpu_now(broker_pid: int | None) -> tuple[float, float]:
    """CPU seconds used so far by the broker (NaN without its pid) and by this load generator."""
    return (cpu_seconds(broker_pid) if broker_pid else float("nan")), time.process_time()


def _cpu_since(before: tuple[float, float], broker_pid: int | None) -> dict[str, float]:
    now = _cpu_now(broker_pid)
    return {"broker_cpu_s": now[0] - before[0], "client_cpu_s": now[1] - before[1]}


def _wait_for_coordinator(bootstrap: str, group: str) -> None:
    """FindCoordinator creates __consumer_offsets; retry until the group's partition is loaded."""
    for _ in range(100):
        if find_group_coordinator(bootstrap, group).error_code == 0:
            return
        time.sleep(0.1)
    raise TimeoutError(f"no coordinator for {group}")


def main() -> None:
    with tempfile.TemporaryDirectory() as data_dir:
        process = BrokerProcess(data_dir=Path(data_dir), overrides={"group.initial.rebalance.delay.ms": "1000",
                                                                    "offsets.topic.num.partitions": "1"})
        with running_broker(process) as broker:
            create_topic(broker.bootstrap, "bench", partitions=PARTITIONS, replication_factor=1)
            meta = RawClient(broker.bootstrap, "spate-bench", timeout=60).call(ApiKey.METADATA, 12, MetadataRequest(
                topics=[MetadataRequest.MetadataRequestTopic(name="bench")]))
            topic_id = meta.topics[0].topic_id
            for group in ("classic-100", "consumer-100", "consumer-1000"):
                _wait_for_coordinator(broker.bootstrap, group)
            classic = classic_join_one(broker.bootstrap, 100)["seconds"]
            print(f"classic, 100 members, one joins: {classic * 1000:.0f} ms until every member has its "
                  f"assignment; all {PARTITIONS} partitions unowned from each member's rejoin to its SyncGroup")
            for members in (100, 1000):
                r = consumer_join_one(broker.bootstrap, "bench", topic_id, members)
                print(f"consumer, {members} members, one joins: {r['seconds'] * 1000:.0f} ms, "
                      f"{r['rounds']} heartbeat rounds; slowest heartbeat {r['slowest_round_s'] * 1000:.1f} ms; "
                      f"{r['members_losing_any']} of {members} members gave up any partition; "
                      f"the newcomer owns {r['newcomer_owns']}")


if __name__ == "__main__":
    main()
