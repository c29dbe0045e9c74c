"""Topic lifecycle on this broker: every check first, then the logs, then the metadata store.

A change is validated completely, partition limits included
(``partition_limits``), before anything is written. The new partitions' logs
are opened next and the store is written last, so a topic appears in
Metadata only once every log exists; a creation that fails half-way (a log
dir error, too many open files) deletes the logs it opened and leaves neither
metadata nor partition directories behind.

Opening thousands of logs takes seconds. :meth:`TopicManager.create_topic_async`
and :meth:`TopicManager.create_partitions_async` therefore open them in
slices of :data:`SLICE_S` on the event loop and yield to it between slices,
rather than on a worker thread: the log manager and the replica manager are
only ever touched from the loop, and keeping it that way needs no locks. The
synchronous variants (auto-creation, internal topics: a few partitions each)
run the same steps in one go.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Callable, Generator, Mapping, Sequence

from broker_core.cluster.assignment import assign_added_partitions, assign_replicas, validate_assignment
from broker_core.cluster.errors import InvalidPartitionsError, InvalidTopicNameError, TopicExistsError
from broker_core.cluster.metadata_store import MetadataStore, TopicDescription
from broker_core.cluster.topic_names import find_collision, is_internal_topic, validate_topic_name
from broker_core.config.broker_config import BrokerConfig
from broker_core.config.topic_config import validate_topic_configs
from broker_core.server.partition_limits import PartitionCounts, PartitionLimits, open_file_limit
from broker_core.server.replica_manager import ReplicaManager
from spate.protocol.errors import ErrorCode, KafkaError

logger = logging.getLogger(__name__)

# Longest stretch of log creation between two turns of the event loop. A request
# from another client needs several turns (accept, read, answer), each waiting up
# to a slice, so slices stay short.
SLICE_S = 0.005


@dataclass(frozen=True, slots=True)
class TopicRequest:
    name: str
    num_partitions: int = -1  # -1: num.partitions
    replication_factor: int = -1  # -1: default.replication.factor
    assignment: Mapping[int, Sequence[int]] | None = None
    configs: Mapping[str, str | None] | None = None


@dataclass(frozen=True)
class PartitionsPlan:
    """New partitions of a topic, validated and placed; nothing written yet."""

    topic: str
    assignment: dict[int, tuple[int, ...]]
    configs: dict[str, str]


Steps = Generator[None, None, TopicDescription]


class TopicManager:
    def __init__(
        self, *, store: MetadataStore, replicas: ReplicaManager, config: BrokerConfig,
        limits: PartitionLimits | None = None,
    ) -> None:
        self._store = store
        self._replicas = replicas
        self._config = config
        self._limits = limits or PartitionLimits.from_config(config, file_limit=open_file_limit())
        # Topics whose partitions are being opened: name -> how many are being added.
        self._changing: dict[str, int] = {}
        # One CreateTopics / CreatePartitions change at a time, as a controller applies them.
        self._serial = asyncio.Lock()

    @property
    def limits(self) -> PartitionLimits:
        return self._limits

    def live_brokers(self) -> list[int]:
        return sorted(b.broker_id for b in self._store.list_brokers())

    def existing_partitions(self) -> PartitionCounts:
        """Partitions in the store plus those being added by a change under way."""
        stored = PartitionCounts.of(
            (state.replicas for state in self._store.get_topic(name).partitions.values())
            for name in self._store.list_topics()
        )
        pending = sum(self._changing.values())
        return stored.plus(PartitionCounts(pending, {self._replicas.node_id: pending}))

    def load_hosted_partitions(self) -> None:
        """Open every partition this broker leads (at start-up)."""
        for name in self._store.list_topics():
            self._open_partitions(self._store.get_topic(name))

    def _open_partitions(self, topic: TopicDescription) -> None:
        for index, state in topic.partitions.items():
            if state.leader == self._replicas.node_id:
                self._replicas.make_leader(topic.name, index, state.leader_epoch, dict(topic.configs))

    # --- CreateTopics -------------------------------------------------------------------------

    def create_topic(self, request: TopicRequest, *, validate_only: bool = False) -> TopicDescription | None:
        plan = self.plan_topic(request)
        return None if validate_only else _run(self._create_steps(plan))

    async def create_topic_async(self, request: TopicRequest, *, validate_only: bool = False) -> None:
        """:meth:`create_topic` without holding the event loop for longer than a slice at a time."""
        async with self._serial:
            plan = self.plan_topic(request)
            if not validate_only:
                await _run_sliced(self._create_steps(plan))

    def plan_topic(self, request: TopicRequest) -> PartitionsPlan:
        """Every check of a creation, limits included; raises the error to answer with."""
        validate_topic_name(request.name)
        if request.name in self._changing or request.name in self._store.list_topics():
            raise TopicExistsError(request.name)
        other = find_collision(request.name, self._store.list_topics())
        if other is not None:
            raise InvalidTopicNameError(f"topic {request.name!r} collides with existing topic {other!r}")
        configs = validate_topic_configs(dict(request.configs or {}))
        return PartitionsPlan(request.name, self._assignment_for(request), configs)

    def _assignment_for(self, request: TopicRequest) -> dict[int, tuple[int, ...]]:
        brokers = self.live_brokers()
        existing = self.existing_partitions()
        if request.assignment:
            if request.num_partitions != -1 or request.replication_factor != -1:
                raise KafkaError(
                    ErrorCode.INVALID_REQUEST,
                    "give either a replica assignment or num_partitions/replication_factor, not both",
                )
            self._limits.check_assignment(request.name, request.assignment, existing)
            assignment = {p: tuple(r) for p, r in request.assignment.items()}
            validate_assignment(assignment, live_brokers=brokers)
            return assignment
        partitions = self._config.get_int("num.partitions") if request.num_partitions == -1 else request.num_partitions
        factor = (
            self._config.get_int("default.replication.factor")
            if request.replication_factor == -1
            else request.replication_factor
        )
        self._limits.check_count(request.name, partitions, factor, existing, brokers)
        assignment = assign_replicas(brokers, partitions, factor)
        self._limits.check_assignment(request.name, assignment, existing)
        return assignment

    def _create_steps(self, plan: PartitionsPlan) -> Steps:
        topic = yield from self._apply(plan, lambda: self._store.create_topic(plan.topic, plan.assignment,
                                                                              plan.configs))
        logger.info("created topic %s with %d partition(s)", plan.topic, len(plan.assignment))
        return topic

    # --- CreatePartitions ---------------------------------------------------------------------

    def create_partitions(
        self, name: str, total: int, assignment: Sequence[Sequence[int]] | None, *, validate_only: bool = False
    ) -> None:
        plan = self.plan_partitions(name, total, assignment)
        if not validate_only:
            _run(self._grow_steps(plan))

    async def create_partitions_async(
        self, name: str, total: int, assignment: Sequence[Sequence[int]] | None, *, validate_only: bool = False
    ) -> None:
        async with self._serial:
            plan = self.plan_partitions(name, total, assignment)
            if not validate_only:
                await _run_sliced(self._grow_steps(plan))

    def plan_partitions(self, name: str, total: int, assignment: Sequence[Sequence[int]] | None) -> PartitionsPlan:
        topic = self._store.get_topic(name)
        current = topic.partition_count
        if total <= current:
            raise InvalidPartitionsError(f"topic {name} has {current} partitions; {total} would not add any")
        if name in self._changing:
            raise KafkaError(ErrorCode.REQUEST_TIMED_OUT, f"topic {name} is being changed; try again")
        self._limits.check_topic_size(name, total)
        brokers, existing = self.live_brokers(), self.existing_partitions()
        if assignment is not None:
            if len(assignment) != total - current:
                raise InvalidPartitionsError(
                    f"assignment names {len(assignment)} new partitions, {total - current} are being added"
                )
            added = {current + i: tuple(replicas) for i, replicas in enumerate(assignment)}
            self._limits.check_assignment(name, added, existing)
            validate_assignment(added, live_brokers=brokers, first_partition=current)
        else:
            self._limits.check_count(name, total - current, topic.replication_factor, existing, brokers)
            added = assign_added_partitions(brokers, topic.assignment(), total)
            self._limits.check_assignment(name, added, existing)
        return PartitionsPlan(name, added, dict(topic.configs))

    def _grow_steps(self, plan: PartitionsPlan) -> Steps:
        topic = yield from self._apply(plan, lambda: self._store.add_partitions(plan.topic, plan.assignment))
        logger.info("topic %s grows to %d partition(s)", plan.topic, topic.partition_count)
        return topic

    # --- opening and discarding new partitions --------------------------------------------------

    def _apply(self, plan: PartitionsPlan, commit: Callable[[], TopicDescription]) -> Steps:
        """Open the plan's logs that this broker leads, a step each, then ``commit`` them to the store.

        On a failure every log opened so far is deleted again (a step each) and
        the failure raised; when the caller stops early (the broker shuts
        down) they are deleted at once.
        """
        self._changing[plan.topic] = len(plan.assignment)
        opened = 0
        try:
            for index, replicas in sorted(plan.assignment.items()):
                if self._replicas.hosted(plan.topic, index) is not None:
                    raise KafkaError(ErrorCode.INVALID_PARTITIONS, f"{plan.topic}-{index} exists already")
                opened += 1  # counted first: a log may exist even when its opening failed
                if replicas[0] == self._replicas.node_id:
                    self._replicas.make_leader(plan.topic, index, 0, plan.configs)
                yield
            topic = commit()
        except Exception as exc:
            failure = exc
        except BaseException:  # stopped early (the broker shuts down): undone at once
            for index in sorted(plan.assignment)[:opened]:
                self._discard(plan.topic, index)
            self._changing.pop(plan.topic, None)
            raise
        else:
            self._changing.pop(plan.topic, None)
            return topic
        logger.error("cannot add the partitions of %s (%s); removing the %d opened", plan.topic, failure, opened)
        left = sorted(plan.assignment)[:opened]
        try:
            while left:
                self._discard(plan.topic, left.pop())
                yield
        finally:
            for index in left:  # stopped early: the rest at once
                self._discard(plan.topic, index)
            self._changing.pop(plan.topic, None)
        raise failure

    def _discard(self, topic: str, index: int) -> None:
        """Delete a new partition's log at once: nobody has seen it."""
        log = self._replicas.log_manager.get_log(topic, index)
        try:
            self._replicas.stop_replica(topic, index, delete=True)
            if log is not None:
                log.delete()
        except Exception:
            logger.exception("cannot remove the log of %s-%d", topic, index)

    # --- auto-creation, deletion, configs -------------------------------------------------------

    def auto_create(self, name: str) -> TopicDescription | None:
        """Create ``name`` with defaults when ``auto.create.topics.enable`` allows it.

        None when not allowed or the name is not a legal one; any other refusal
        (a partition limit, a creation under way) is raised.
        """
        if not self._config.get_bool("auto.create.topics.enable") or is_internal_topic(name):
            return None
        try:
            return self.create_topic(TopicRequest(name))
        except InvalidTopicNameError:
            return None

    def delete_topic(self, name: str) -> None:
        if not self._config.get_bool("delete.topic.enable"):
            raise KafkaError(ErrorCode.TOPIC_DELETION_DISABLED, "delete.topic.enable is false on this broker")
        if is_internal_topic(name):
            raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"internal topic {name} cannot be deleted")
        self._store.delete_topic(name)
        self._replicas.remove_topic(name)
        logger.info("deleted topic %s", name)

    def alter_configs(self, name: str, configs: Mapping[str, str | None], *, validate_only: bool = False) -> None:
        """Replace the topic's overrides (AlterConfigs is not incremental)."""
        self._store.get_topic(name)
        validated = validate_topic_configs(dict(configs))
        if validate_only:
            return
        self._store.set_topic_configs(name, validated)
        self._replicas.update_topic_config(name, validated)


def _run(steps: Steps) -> TopicDescription:
    """Every step at once."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


async def _run_sliced(steps: Steps) -> TopicDescription:
    """The steps in slices of :data:`SLICE_S`, giving the loop a turn between slices; a cancelled
    caller closes the steps, which undo what they did."""
    try:
        slice_end = time.monotonic() + SLICE_S
        while True:
            try:
                next(steps)
            except StopIteration as done:
                return done.value
            if time.monotonic() >= slice_end:
                await asyncio.sleep(0)
                slice_end = time.monotonic() + SLICE_S
    except BaseException:
        steps.close()
        raise
