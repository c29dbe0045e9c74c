"""A transactional read-process-write copy while leaders and coordinators are killed: the output equals the input.

After Kafka's transactions system test. An idempotent acks=all producer
writes the input topic (at a rate that spreads it over the bounces) while
the transactional copier (``tests.scenarios.durability.eos_copier``, kept
running by :class:`~tests.support.faults.copier.CopierSupervisor`) copies
it to the output topic, each transaction carrying the consumed offsets.
Each round kills one broker: in turn the leader of a random input
partition, of a random output partition, the copier's transaction
coordinator (the leader of its ``__transaction_state`` partition) and its
group coordinator (of ``__consumer_offsets``); SIGKILL and SIGTERM
alternate. The broker starts again with the same data 2 s later (after a
SIGKILL, once ZooKeeper expired its session), and the next round waits for
every replica of the four topics to be back in its ISR.

Once the input is complete and the copier has caught up, the output read
with ``read_committed`` must equal the input exactly: every input value
once, nothing else (no duplicate, no gap, nothing of an aborted
transaction). The input's own history is checked as in the other
scenarios, and the replicas of both topics must agree below the high
watermark.

Figures: records copied, committed transactions aborted and retried, the
records of aborted transactions in the output's log (hidden from
read_committed), copier restarts and failures, restarts after a stalled
client call (librdkafka's ``send_offsets_to_transaction`` can wait forever
once its cached group coordinator is gone: librdkafka issues 5456 and
5511), time to new leader.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from broker_core.coordinator.partitioning import partition_for
from tests.support.faults import FaultCluster
from tests.support.faults.copier import CopierSupervisor
from tests.support.faults.figures import FaultFigures
from tests.support.faults.history import check_history
from tests.support.faults.leadership import (
    led_by,
    partition_state,
    wait_for_identical_replicas,
    wait_for_new_leaders,
    wait_until_in_sync,
)
from tests.support.faults.scale import FaultScale
from tests.support.faults.workload import IdempotentWorkload, read_all, read_committed

PARTITIONS = 3
INTERNAL_PARTITIONS = 3  # offsets.topic.num.partitions, transaction.state.log.num.partitions
TRANSACTION_STATE = "__transaction_state"
CONSUMER_OFFSETS = "__consumer_offsets"
# The input is written over about this long per round, so the bounces land while it is being copied.
INPUT_SECONDS_PER_ROUND = 10
RESTART_DELAY_S = 2.0
TARGETS = ("input leader", "output leader", "transaction coordinator", "group coordinator")

SCALE = FaultScale.from_environment()
pytestmark = [pytest.mark.integration,
              pytest.mark.timeout(300 + 40 * SCALE.rounds + SCALE.copy_records // 200)]


def victim_for(cluster: FaultCluster, target: str, rng, input_topic: str, output_topic: str,
               transactional_id: str, group: str) -> int:
    if target == "input leader":
        return partition_state(cluster, input_topic, rng.randrange(PARTITIONS)).leader
    if target == "output leader":
        return partition_state(cluster, output_topic, rng.randrange(PARTITIONS)).leader
    if target == "transaction coordinator":
        return partition_state(cluster, TRANSACTION_STATE, partition_for(transactional_id, INTERNAL_PARTITIONS)).leader
    return partition_state(cluster, CONSUMER_OFFSETS, partition_for(group, INTERNAL_PARTITIONS)).leader


def bounce(cluster: FaultCluster, victim: int, *, hard: bool, topics: list[str], watcher: ThreadPoolExecutor,
           figures: FaultFigures) -> None:
    """Kill (SIGKILL when ``hard``, else SIGTERM) and restart ``victim``; wait for every ISR to be whole."""
    led = led_by(cluster, topics, victim)
    at = time.monotonic()
    new_leaders = watcher.submit(wait_for_new_leaders, cluster, led, at) if led else None
    if hard:
        cluster.kill(victim)
    else:
        assert cluster.stop(victim) == 0, cluster.broker(victim).log_tail()
    time.sleep(RESTART_DELAY_S)
    cluster.wait_for(lambda: not cluster.registered(victim), f"broker {victim}'s registration to go")
    restarted_at = time.monotonic()
    cluster.restart(victim, clean=not hard)
    if new_leaders is not None:
        figures.to_new_leader_s.append(new_leaders.result())
    figures.to_in_sync_s.append(wait_until_in_sync(cluster, topics, since=restarted_at))


def test_transactional_copy_with_bounced_leaders_and_coordinators_equals_its_input(cluster, scale, rng,
                                                                                   topic_name, tmp_path) -> None:
    input_topic, output_topic, group = topic_name("in"), topic_name("out"), topic_name("group")
    transactional_id = f"{group}-txn"
    for topic in (input_topic, output_topic):
        cluster.create_topic(topic, partitions=PARTITIONS, replication_factor=3)
    figures = FaultFigures("transactional copy with bounces")
    rate = scale.copy_records / (INPUT_SECONDS_PER_ROUND * scale.rounds)
    producer = IdempotentWorkload(cluster.bootstrap, input_topic, PARTITIONS, rate=rate,
                                  max_values=scale.copy_records).start()
    copier = CopierSupervisor(cluster.bootstrap, input_topic, output_topic, group, transactional_id,
                              tmp_path / "copier.stderr").start()
    try:
        # The internal topics exist once the copier has found its coordinators and committed once.
        cluster.wait_for(lambda: copier.progress > 0, "the copier's first commit")
        topics = [input_topic, output_topic, TRANSACTION_STATE, CONSUMER_OFFSETS]
        wait_until_in_sync(cluster, topics)
        bounced = []
        with ThreadPoolExecutor(1) as watcher:
            for round_ in range(scale.rounds):
                target = TARGETS[round_ % len(TARGETS)]
                victim = victim_for(cluster, target, rng, input_topic, output_topic, transactional_id, group)
                hard = round_ % 2 == 0
                bounced.append(f"{target} {victim} {'SIGKILL' if hard else 'SIGTERM'} at {copier.progress}")
                bounce(cluster, victim, hard=hard, topics=topics, watcher=watcher, figures=figures)
                figures.faults += 1
        while producer.history.sent < scale.copy_records and producer.running():
            time.sleep(0.2)
        history = producer.stop()
        copier.finish(timeout=120 + scale.copy_records / 500)
    finally:
        copier.close()
        if producer.running():
            producer.stop(flush_timeout_s=5)

    input_read = read_committed(cluster.bootstrap, input_topic, PARTITIONS)
    input_report = check_history(history, input_read)
    output_committed = read_committed(cluster.bootstrap, output_topic, PARTITIONS)
    output_everything = read_all(cluster.bootstrap, output_topic, PARTITIONS, isolation_level="read_uncommitted")

    expected = Counter(value for records in input_read.values() for _, value in records)
    copied = Counter(value for records in output_committed.values() for _, value in records)
    in_log = sum(len(records) for records in output_everything.values())
    figures.add_history(input_report)
    figures.extra.update(
        copied=sum(copied.values()), aborted_transactions=copier.aborted_transactions(),
        aborted_records_in_log=in_log - sum(copied.values()),
        copier_exits=len(copier.exits), copier_failures=len(copier.failures), copier_stalls=len(copier.stalls),
        bounces=bounced,
    )
    try:
        wait_for_identical_replicas(cluster, [input_topic, output_topic])
    finally:
        figures.publish()
    assert history.fatal_error is None, history.fatal_error
    assert input_report.ok, input_report.summary()
    duplicated = sorted(value for value, count in copied.items() if count > 1)
    missing = sorted(set(expected) - set(copied))
    unexpected = sorted(set(copied) - set(expected))
    assert (duplicated, missing, unexpected) == ([], [], []), (
        f"{len(duplicated)} duplicated (e.g. {duplicated[:5]}), {len(missing)} missing (e.g. {missing[:5]}), "
        f"{len(unexpected)} unexpected (e.g. {unexpected[:5]})")
    assert sum(copied.values()) == sum(expected.values()) == input_report.read
    assert not copier.failures, f"the copier failed: {copier.failures}"
