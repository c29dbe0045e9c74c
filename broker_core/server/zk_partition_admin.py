"""Preferred leader elections and partition reassignments of a cluster broker, through ZooKeeper.

* ElectLeaders (preferred): partitions already led by their first replica
  answer ELECTION_NOT_NEEDED, those whose first replica is not alive and in
  sync PREFERRED_LEADER_NOT_AVAILABLE, unknown ones UNKNOWN_TOPIC_OR_PARTITION;
  the rest go to ``/admin/preferred_replica_election`` (after any earlier
  election there is done) and answer once the metadata cache shows their
  preferred leaders, or REQUEST_TIMED_OUT.
* AlterPartitionReassignments merges its targets into
  ``/admin/reassign_partitions`` (a conditional write) and answers once
  written, as Kafka answers once a reassignment has started. Cancelling
  (``null`` replicas) drops a move the controller has not picked up yet, or
  sends one it has started back to its original replicas.
* ListPartitionReassignments reports the moves under way (the adding and
  removing replicas the controller wrote into topic znodes) and those still
  waiting in ``/admin/reassign_partitions``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Mapping, Sequence

from broker_core.cluster.errors import UnknownTopicError
from broker_core.cluster.zk.admin_zk import AdminOperationInProgressError, AdminZkClient, ConcurrentUpdateError
from broker_core.cluster.zk.znodes.topics import TopicAssignment
from broker_core.server.errors import outcome, zookeeper_outcome
from broker_core.server.metadata_cache import MetadataCache
from broker_core.server.metadata_view import partition_of
from broker_core.server.topic_admin import OK, OngoingReassignment, Outcome, check_reassignment_target
from spate.protocol.errors import ErrorCode, KafkaError
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

ELECTION_RETRY_S = 0.2
MAX_CONFLICTS = 5


class ZkPartitionAdmin:
    def __init__(self, *, cache: MetadataCache, admin_zk: AdminZkClient) -> None:
        self._cache = cache
        self._zk = admin_zk

    # --- ElectLeaders ----------------------------------------------------------------------

    async def elect_preferred_leaders(
        self, partitions: Sequence[TopicPartition] | None, *, timeout_ms: int
    ) -> dict[TopicPartition, Outcome]:
        every = partitions is None
        wanted = self._all_partitions() if partitions is None else list(partitions)
        results: dict[TopicPartition, Outcome] = {tp: self._election_check(tp) for tp in wanted}
        to_elect = [tp for tp, result in results.items() if result is OK]
        if to_elect:
            deadline = time.monotonic() + max(timeout_ms, 0) / 1000
            try:
                await self._request_election(to_elect, deadline)
            except Exception as exc:
                code, message = zookeeper_outcome(exc, where="preferred leader election")
                results.update({tp: (code, message) for tp in to_elect})
            else:
                await self._cache.wait_until(lambda: all(self._preferred_leads(tp) for tp in to_elect),
                                             deadline - time.monotonic())
                for tp in to_elect:
                    if not self._preferred_leads(tp):
                        results[tp] = (ErrorCode.REQUEST_TIMED_OUT, f"{tp}: the election did not finish in time")
        if every:
            return {tp: r for tp, r in results.items() if r[0] != ErrorCode.ELECTION_NOT_NEEDED}
        return results

    def _election_check(self, tp: TopicPartition) -> Outcome:
        state = partition_of(self._cache, tp.topic, tp.partition)
        if state is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{tp} does not exist"
        preferred = state.replicas[0] if state.replicas else -1
        if state.leader == preferred:
            return ErrorCode.ELECTION_NOT_NEEDED, f"{tp} is already led by its preferred replica {preferred}"
        if self._cache.alive_broker(preferred) is None or preferred not in state.isr:
            return (ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
                    f"{tp}: preferred replica {preferred} is not alive and in sync")
        return OK

    def _preferred_leads(self, tp: TopicPartition) -> bool:
        state = partition_of(self._cache, tp.topic, tp.partition)
        return state is not None and bool(state.replicas) and state.leader == state.replicas[0]

    async def _request_election(self, partitions: list[TopicPartition], deadline: float) -> None:
        """Write the election znode, waiting (within ``deadline``) for an earlier election to finish first."""
        while True:
            try:
                await asyncio.to_thread(self._zk.elect_preferred_replicas, partitions)
                logger.info("preferred leader election requested for %d partition(s)", len(partitions))
                return
            except AdminOperationInProgressError:
                if time.monotonic() + ELECTION_RETRY_S > deadline:
                    raise KafkaError(ErrorCode.REQUEST_TIMED_OUT,
                                     "an earlier preferred leader election is still running")
                await asyncio.sleep(ELECTION_RETRY_S)

    def _all_partitions(self) -> list[TopicPartition]:
        found = []
        for name in self._cache.topic_names():
            found.extend(TopicPartition(name, p) for p in self._cache.get_topic(name).partitions)
        return found

    # --- AlterPartitionReassignments -------------------------------------------------------

    async def alter_partition_reassignments(
        self, targets: Mapping[TopicPartition, Sequence[int] | None]
    ) -> dict[TopicPartition, Outcome]:
        alive = {b.broker_id for b in self._cache.alive_brokers()}
        results: dict[TopicPartition, Outcome] = {}
        valid: dict[TopicPartition, tuple[int, ...] | None] = {}
        for tp, target in targets.items():
            state = partition_of(self._cache, tp.topic, tp.partition)
            if state is None:
                results[tp] = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{tp} does not exist")
                continue
            if target is not None:
                checked = outcome(check_reassignment_target, tp, state.replicas, target, alive,
                                  where="alter_partition_reassignments")
                if checked[0] != ErrorCode.NONE:
                    results[tp] = checked
                    continue
            valid[tp] = tuple(target) if target is not None else None
        if valid:
            try:
                results.update(await asyncio.to_thread(self._merge_reassignments, valid))
            except Exception as exc:
                code, message = zookeeper_outcome(exc, where="partition reassignment")
                results.update({tp: (code, message) for tp in valid})
        return {tp: results[tp] for tp in targets}

    def _merge_reassignments(
        self, targets: Mapping[TopicPartition, tuple[int, ...] | None]
    ) -> dict[TopicPartition, Outcome]:
        """On a worker thread: merge ``targets`` into ``/admin/reassign_partitions``, conditionally."""
        for _ in range(MAX_CONFLICTS):
            pending, version = self._zk.read_pending_reassignments()
            ongoing = self._zk.read_assignments({tp.topic for tp in targets})
            merged = dict(pending)
            results: dict[TopicPartition, Outcome] = {}
            for tp, target in targets.items():
                if target is not None:
                    merged[tp] = target
                    results[tp] = OK
                elif tp in merged:
                    del merged[tp]
                    results[tp] = OK
                elif _is_moving(ongoing.get(tp.topic), tp.partition):
                    merged[tp] = _original_replicas(ongoing[tp.topic], tp.partition)
                    results[tp] = OK
                else:
                    results[tp] = (ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, f"{tp} is not being reassigned")
            if merged == pending:
                return results
            try:
                self._zk.write_pending_reassignments(merged, version)
            except ConcurrentUpdateError:
                continue
            logger.info("partition reassignments requested: %s", {str(tp): r for tp, r in merged.items()})
            return results
        raise KafkaError(ErrorCode.REQUEST_TIMED_OUT, "/admin/reassign_partitions kept changing; try again")

    # --- ListPartitionReassignments ----------------------------------------------------------

    async def list_partition_reassignments(
        self, partitions: Sequence[TopicPartition] | None
    ) -> dict[TopicPartition, OngoingReassignment]:
        topics = self._cache.topic_names() if partitions is None else sorted({tp.topic for tp in partitions})
        pending, ongoing = await asyncio.to_thread(self._read_reassignments, topics)
        found: dict[TopicPartition, OngoingReassignment] = {}
        for name, assignment in ongoing.items():
            for partition in sorted(set(assignment.adding_replicas) | set(assignment.removing_replicas)):
                found[TopicPartition(name, partition)] = OngoingReassignment(
                    tuple(assignment.partitions.get(partition, ())),
                    tuple(assignment.adding_replicas.get(partition, ())),
                    tuple(assignment.removing_replicas.get(partition, ())),
                )
        for tp, target in pending.items():
            current = self._current_replicas(tp)
            if tp in found or current is None or tuple(target) == current:
                continue
            found[tp] = OngoingReassignment(
                tuple(target) + tuple(r for r in current if r not in target),
                tuple(r for r in target if r not in current),
                tuple(r for r in current if r not in target),
            )
        if partitions is not None:
            wanted = set(partitions)
            found = {tp: r for tp, r in found.items() if tp in wanted}
        return dict(sorted(found.items()))

    def _read_reassignments(
        self, topics: list[str]
    ) -> tuple[dict[TopicPartition, tuple[int, ...]], dict[str, TopicAssignment]]:
        pending, _ = self._zk.read_pending_reassignments()
        return pending, self._zk.read_assignments(topics)

    def _current_replicas(self, tp: TopicPartition) -> tuple[int, ...] | None:
        try:
            state = self._cache.get_topic(tp.topic).partitions.get(tp.partition)
        except UnknownTopicError:
            return None
        return state.replicas if state is not None else None


def _is_moving(assignment: TopicAssignment | None, partition: int) -> bool:
    return assignment is not None and (
        partition in assignment.adding_replicas or partition in assignment.removing_replicas
    )


def _original_replicas(assignment: TopicAssignment, partition: int) -> tuple[int, ...]:
    """The replicas before the move: the current set without the ones it is adding."""
    adding = set(assignment.adding_replicas.get(partition, ()))
    return tuple(r for r in assignment.partitions.get(partition, ()) if r not in adding)
