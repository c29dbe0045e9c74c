"""Admin requests of a cluster broker (Kafka's ``ZkAdminManager``): write ZooKeeper, then wait for the cache.

Any broker takes any admin request. It validates against its metadata cache
(live brokers, racks, known topics), writes what Kafka's ``AdminZkClient``
writes (``broker_core.cluster.zk.admin_zk``) on a worker thread, and answers
once the controller's UpdateMetadata shows the change: CreateTopics and
CreatePartitions when every new partition has a leader, DeleteTopics when the
topic is gone. A request whose ``timeout_ms`` passes first answers
REQUEST_TIMED_OUT for what is still missing (the change itself goes on, as
in Kafka); a timeout of 0 answers at once. Config changes answer once written.

Partition counts are bounded by ``max.partitions`` (over every topic the
metadata cache knows) and ``max.broker.partitions`` (replicas per live
broker), checked by arithmetic before any placement is computed and per
broker on the placement (``partition_limits``); topics written but not yet in
the cache are not counted, so two creations racing through different brokers
can together pass a limit by the size of one of them.

Placement is Kafka's: a random start, rack-aware when brokers have racks
(a request on a cluster where only some have one is refused; topics the
broker creates by itself are then placed without racks, Kafka's "safe"
mode); explicit replica lists must name live brokers. Internal topics requested by
the coordinators are created in the background, their replication factor
capped by the live brokers. Leader elections and reassignments are in
``zk_partition_admin``.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any, Callable, Mapping, Sequence

from broker_core.cluster.assignment import assign_added_partitions, assign_replicas, validate_assignment
from broker_core.cluster.errors import TopicExistsError, UnknownTopicError
from broker_core.cluster.topic_names import is_internal_topic, validate_topic_name
from broker_core.cluster.zk.admin_zk import AdminZkClient, ConcurrentUpdateError
from broker_core.cluster.zk.znodes.topics import TopicAssignment
from broker_core.config.broker_config import BrokerConfig
from broker_core.config.incremental_configs import ConfigOp, apply_incremental_ops
from broker_core.config.topic_config import validate_topic_configs
from broker_core.server.errors import zookeeper_outcome
from broker_core.server.metadata_cache import MetadataCache
from broker_core.server.metadata_view import TopicMetadata
from broker_core.server.partition_limits import PartitionCounts, PartitionLimits, open_file_limit
from broker_core.server.topic_admin import OK, OngoingReassignment, Outcome, PartitionsRequest
from broker_core.server.topic_manager import TopicRequest
from broker_core.server.zk_partition_admin import ZkPartitionAdmin
from spate.protocol.errors import ErrorCode, KafkaError
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

# Conditional writes lost to a concurrent writer of the same znode before giving up.
MAX_CONFLICTS = 5


class ZkAdminManager:
    """:class:`~broker_core.server.topic_admin.TopicAdmin` of a broker in a ZooKeeper cluster."""

    def __init__(
        self,
        *,
        config: BrokerConfig,
        cache: MetadataCache,
        admin_zk: AdminZkClient,
        rng: random.Random | None = None,
        limits: PartitionLimits | None = None,
    ) -> None:
        self._config = config
        self._limits = limits or PartitionLimits.from_config(config, file_limit=open_file_limit())
        self._cache = cache
        self._zk = admin_zk
        self._rng = rng or random.Random()
        self._background: set[asyncio.Task[None]] = set()
        self._creating: set[str] = set()
        self._partitions = ZkPartitionAdmin(cache=cache, admin_zk=admin_zk)

    async def _zk_call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    def _placement(self, *, safe: bool = False) -> tuple[list[int], dict[int, str | None]]:
        """Live broker ids and their racks. A mix of brokers with and without a rack is refused by
        rack-aware placement; ``safe`` (Kafka's RackAwareMode.Safe, for topics the broker creates by
        itself) places such a mix without racks instead."""
        brokers = self._cache.alive_brokers()
        racks = {b.broker_id: b.rack for b in brokers}
        if safe and any(rack is None for rack in racks.values()):
            racks = {}
        return [b.broker_id for b in brokers], racks

    # --- CreateTopics ------------------------------------------------------------------------

    async def create_topics(
        self, requests: Sequence[TopicRequest], *, validate_only: bool, timeout_ms: int
    ) -> list[Outcome]:
        outcomes: list[Outcome] = []
        created: dict[str, int] = {}
        for request in requests:
            try:
                partitions = await self._create_topic(request, validate_only)
            except Exception as exc:
                outcomes.append(zookeeper_outcome(exc, where=f"creating topic {request.name}"))
                continue
            outcomes.append(OK)
            created[request.name] = partitions
        if validate_only or not created:
            return outcomes
        def elected(name: str) -> bool:
            return self._has_leaders(name, range(created[name]))

        ready = await self._wait(lambda: all(elected(name) for name in created), timeout_ms)
        return [
            (ErrorCode.REQUEST_TIMED_OUT, "the topic was created; its leaders were not elected in time")
            if result == OK and not ready and not elected(request.name)
            else result
            for request, result in zip(requests, outcomes)
        ]

    async def _create_topic(self, request: TopicRequest, validate_only: bool, *, safe: bool = False) -> int:
        validate_topic_name(request.name)
        if self._cache.partition_count(request.name) is not None:
            raise TopicExistsError(request.name)
        configs = validate_topic_configs(dict(request.configs or {}))
        assignment = await self._assignment_for(request, safe=safe)
        await self._zk_call(self._zk.validate_topic_create, request.name)
        if not validate_only:
            await self._zk_call(self._zk.create_topic, request.name, assignment, configs)
            logger.info("topic %s requested with %d partition(s)", request.name, len(assignment))
        return len(assignment)

    async def _assignment_for(self, request: TopicRequest, *, safe: bool) -> dict[int, tuple[int, ...]]:
        """The checked placement; partition limits are checked by arithmetic before it is computed (on a
        worker thread: it is pure, and a large one takes a while) and per broker after."""
        broker_ids, racks = self._placement(safe=safe)
        existing = self._existing_partitions()
        if request.assignment:
            self._limits.check_assignment(request.name, request.assignment, existing)
            if request.num_partitions != -1 or request.replication_factor != -1:
                raise KafkaError(
                    ErrorCode.INVALID_REQUEST,
                    "give either a replica assignment or num_partitions/replication_factor, not both",
                )
            assignment = {p: tuple(r) for p, r in request.assignment.items()}
            validate_assignment(assignment, live_brokers=broker_ids)
            return assignment
        partitions, factor = self._counts_of(request)
        self._limits.check_count(request.name, partitions, factor, existing, broker_ids)
        assignment = await asyncio.to_thread(assign_replicas, broker_ids, partitions, factor, rng=self._rng,
                                             racks=racks)
        self._limits.check_assignment(request.name, assignment, existing)
        return assignment

    def _counts_of(self, request: TopicRequest) -> tuple[int, int]:
        """Partitions and replication factor of a creation without an assignment, defaults applied."""
        partitions = request.num_partitions if request.num_partitions != -1 else self._config.get_int("num.partitions")
        factor = (
            request.replication_factor
            if request.replication_factor != -1
            else self._config.get_int("default.replication.factor")
        )
        return partitions, factor

    def _existing_partitions(self) -> PartitionCounts:
        """Every partition the metadata cache knows, with its replicas per broker."""
        return PartitionCounts.of(
            (state.replicas for state in self._cache.get_topic(name).partitions.values())
            for name in self._cache.topic_names()
        )

    # --- topics created on behalf of the broker (auto-creation, internal topics) ------------

    def auto_create(self, name: str) -> TopicMetadata | ErrorCode:
        if not self._config.get_bool("auto.create.topics.enable") or is_internal_topic(name):
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        request = TopicRequest(name)
        try:
            # Refused at once (Kafka answers the refusal's error) rather than failing in the background.
            self._limits.check_count(name, *self._counts_of(request), self._existing_partitions(),
                                     self._placement()[0])
        except KafkaError as exc:
            logger.warning("cannot auto-create topic %s: %s", name, exc)
            return exc.code
        self.create_topic(request)
        return ErrorCode.LEADER_NOT_AVAILABLE

    def create_topic(self, request: TopicRequest) -> None:
        """Start creating the topic in the background and return at once (the caller asks again later).

        This is the topic manager's ``create_topic`` as the coordinators' internal topics use it.
        """
        if request.name in self._creating or self._cache.partition_count(request.name) is not None:
            return
        self._creating.add(request.name)
        task = asyncio.get_running_loop().create_task(self._create_in_background(request))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _create_in_background(self, request: TopicRequest) -> None:
        try:
            live = len(self._cache.alive_brokers())
            if live == 0:
                logger.warning("cannot create %s yet: no live broker is known", request.name)
                return
            if is_internal_topic(request.name) and request.replication_factor > live:
                logger.warning(
                    "creating %s with replication factor %d, not %d: only %d broker(s) are alive",
                    request.name, live, request.replication_factor, live,
                )
                request = TopicRequest(request.name, request.num_partitions, live, None, request.configs)
            await self._create_topic(request, validate_only=False, safe=True)
        except TopicExistsError:
            pass
        except Exception as exc:
            code, message = zookeeper_outcome(exc, where=f"creating topic {request.name}")
            logger.warning("cannot create %s: %s (%s)", request.name, message, code.name)
        finally:
            self._creating.discard(request.name)

    # --- DeleteTopics ------------------------------------------------------------------------

    async def delete_topics(self, names: Sequence[str], *, timeout_ms: int) -> list[Outcome]:
        outcomes: list[Outcome] = []
        deleting: set[str] = set()
        for name in names:
            try:
                await self._delete_topic(name)
            except Exception as exc:
                outcomes.append(zookeeper_outcome(exc, where=f"deleting topic {name}"))
                continue
            outcomes.append(OK)
            deleting.add(name)
        if not deleting:
            return outcomes
        ready = await self._wait(lambda: all(self._cache.partition_count(n) is None for n in deleting), timeout_ms)
        return [
            (ErrorCode.REQUEST_TIMED_OUT, "deletion was requested; it is not complete yet")
            if result == OK and not ready and self._cache.partition_count(name) is not None
            else result
            for name, result in zip(names, outcomes)
        ]

    async def _delete_topic(self, name: str) -> None:
        if not self._config.get_bool("delete.topic.enable"):
            raise KafkaError(ErrorCode.TOPIC_DELETION_DISABLED, "delete.topic.enable is false on this broker")
        if is_internal_topic(name):
            raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"internal topic {name} cannot be deleted")
        if self._cache.partition_count(name) is None:
            raise UnknownTopicError(name)
        if await self._zk_call(self._zk.delete_topic, name):
            logger.info("deletion of topic %s requested", name)

    # --- CreatePartitions --------------------------------------------------------------------

    async def create_partitions(
        self, requests: Sequence[PartitionsRequest], *, validate_only: bool, timeout_ms: int
    ) -> list[Outcome]:
        outcomes: list[Outcome] = []
        grown: dict[str, int] = {}
        for request in requests:
            try:
                existing = self._check_growth(request)
                await self._zk_call(self._grow, request, validate_only, existing, *self._placement())
            except Exception as exc:
                outcomes.append(zookeeper_outcome(exc, where=f"adding partitions to {request.name}"))
                continue
            outcomes.append(OK)
            grown[request.name] = request.count
        if validate_only or not grown:
            return outcomes
        ready = await self._wait(lambda: all(self._has_leaders(n, range(c)) for n, c in grown.items()), timeout_ms)
        return [
            (ErrorCode.REQUEST_TIMED_OUT, "the partitions were added; their leaders were not elected in time")
            if result == OK and not ready and not self._has_leaders(r.name, range(r.count))
            else result
            for r, result in zip(requests, outcomes)
        ]

    def _check_growth(self, request: PartitionsRequest) -> PartitionCounts:
        """The partition limits by arithmetic, before ZooKeeper is read; returns the counts to check the
        placement against."""
        self._limits.check_topic_size(request.name, request.count)
        existing = self._existing_partitions()
        current = self._cache.partition_count(request.name)
        if current is not None and request.count > current and request.assignment is None:
            first = self._cache.get_topic(request.name).partitions.get(0)
            factor = len(first.replicas) if first is not None else 1
            self._limits.check_count(request.name, request.count - current, factor, existing,
                                     self._placement()[0])
        return existing

    def _grow(
        self, request: PartitionsRequest, validate_only: bool, existing: PartitionCounts, broker_ids: list[int],
        racks: dict[int, str | None],
    ) -> None:
        """On a worker thread: read the assignment, place the new partitions, write conditionally."""
        for _ in range(MAX_CONFLICTS):
            stored = self._zk.read_assignment(request.name)
            current = stored.assignment
            if current.adding_replicas or current.removing_replicas:
                raise KafkaError(ErrorCode.REASSIGNMENT_IN_PROGRESS, f"topic {request.name} is being reassigned")
            added = self._new_partitions(request, current.partitions, broker_ids, racks)
            self._limits.check_assignment(request.name, added, existing)
            if validate_only:
                return
            updated = TopicAssignment(current.topic_id, {**current.partitions, **added})
            try:
                self._zk.write_assignment(request.name, updated, stored.version)
            except ConcurrentUpdateError:
                continue
            logger.info("topic %s grows to %d partition(s)", request.name, request.count)
            return
        raise KafkaError(ErrorCode.REQUEST_TIMED_OUT, f"topic {request.name} kept changing; try again")

    @staticmethod
    def _new_partitions(
        request: PartitionsRequest, existing: Mapping[int, tuple[int, ...]], broker_ids: list[int],
        racks: dict[int, str | None],
    ) -> dict[int, tuple[int, ...]]:
        current = len(existing)
        increment = request.count - current
        if increment < 0:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS,
                             f"topic has {current} partitions, more than the requested {request.count}")
        if increment == 0:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS, f"topic already has {current} partitions")
        if request.assignment is None:
            return assign_added_partitions(broker_ids, existing, request.count, racks=racks)
        unknown = sorted({b for replicas in request.assignment for b in replicas} - set(broker_ids))
        if unknown:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"unknown broker(s) in the assignment: {unknown}")
        if len(request.assignment) != increment:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             f"{increment} partitions are added but {len(request.assignment)} assignments given")
        added = {current + i: tuple(replicas) for i, replicas in enumerate(request.assignment)}
        factor = len(existing[0]) if 0 in existing else None
        validate_assignment(added, first_partition=current, replication_factor=factor, live_brokers=broker_ids)
        return added

    # --- configs -----------------------------------------------------------------------------

    async def topic_configs(self, name: str) -> dict[str, str]:
        return await self._zk_call(self._read_configs, name)

    def _read_configs(self, name: str) -> dict[str, str]:
        if not self._zk.topic_exists(name):
            raise UnknownTopicError(name)
        return self._zk.read_topic_configs(name)

    async def alter_topic_configs(self, name: str, configs: Mapping[str, str | None], *, validate_only: bool) -> None:
        validated = validate_topic_configs(dict(configs))
        await self._write_configs(name, validated, validate_only)

    async def incremental_alter_topic_configs(self, name: str, ops: Sequence[ConfigOp], *, validate_only: bool) -> None:
        current = await self.topic_configs(name)
        await self._write_configs(name, apply_incremental_ops(self._config, current, ops), validate_only)

    async def _write_configs(self, name: str, configs: dict[str, str], validate_only: bool) -> None:
        if validate_only:
            if not await self._zk_call(self._zk.topic_exists, name):
                raise UnknownTopicError(name)
            return
        await self._zk_call(self._zk.change_topic_config, name, configs)
        logger.info("config overrides of topic %s changed to %s", name, configs)

    # --- leadership and reassignments (see zk_partition_admin) ---------------------------------

    async def elect_preferred_leaders(
        self, partitions: Sequence[TopicPartition] | None, *, timeout_ms: int
    ) -> dict[TopicPartition, Outcome]:
        return await self._partitions.elect_preferred_leaders(partitions, timeout_ms=timeout_ms)

    async def alter_partition_reassignments(
        self, targets: Mapping[TopicPartition, Sequence[int] | None]
    ) -> dict[TopicPartition, Outcome]:
        return await self._partitions.alter_partition_reassignments(targets)

    async def list_partition_reassignments(
        self, partitions: Sequence[TopicPartition] | None
    ) -> dict[TopicPartition, OngoingReassignment]:
        return await self._partitions.list_partition_reassignments(partitions)

    # --- helpers -------------------------------------------------------------------------------

    def _has_leaders(self, name: str, partitions: range) -> bool:
        try:
            states = self._cache.get_topic(name).partitions
        except UnknownTopicError:
            return False
        return all(p in states and states[p].has_leader for p in partitions)

    async def _wait(self, condition: Callable[[], bool], timeout_ms: int) -> bool:
        if timeout_ms <= 0:
            return condition()
        return await self._cache.wait_until(condition, timeout_ms / 1000)

    async def close(self) -> None:
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
