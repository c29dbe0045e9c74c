"""The admin requests that change the cluster, behind one interface for both modes.

:class:`TopicAdmin` is what the CreateTopics, DeleteTopics, CreatePartitions,
(Incremental)AlterConfigs, DescribeConfigs, ElectLeaders and partition
reassignment handlers call. Two implementations:

* :class:`EmbeddedTopicAdmin`: the single broker's own store and logs,
  changed at once (the topic manager);
* ``broker_core.server.zk_admin_manager.ZkAdminManager``: ZooKeeper written as
  Kafka's ``AdminZkClient`` writes it, answered once the controller's
  UpdateMetadata shows the change.

Per-resource results are ``(error code, message)`` pairs in request order,
so one failing resource never stops the others.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Mapping, Protocol, Sequence

from broker_core.cluster.errors import TopicExistsError, UnknownTopicError
from broker_core.cluster.metadata_store import MetadataStore
from broker_core.config.broker_config import BrokerConfig
from broker_core.config.incremental_configs import ConfigOp, apply_incremental_ops
from broker_core.server.errors import error_code_for, outcome
from broker_core.server.metadata_view import MetadataView, TopicMetadata, partition_of
from broker_core.server.topic_manager import TopicManager, TopicRequest
from spate.protocol.errors import ErrorCode, KafkaError
from spate.structs import TopicPartition

logger = logging.getLogger(__name__)

Outcome = tuple[ErrorCode, "str | None"]
OK: Outcome = (ErrorCode.NONE, None)


@dataclass(frozen=True)
class PartitionsRequest:
    """CreatePartitions for one topic: grow to ``count``, with an optional replica list per new partition."""

    name: str
    count: int
    assignment: Sequence[Sequence[int]] | None = None


@dataclass(frozen=True)
class OngoingReassignment:
    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


class TopicAdmin(Protocol):
    def auto_create(self, name: str) -> TopicMetadata | ErrorCode:
        """Create ``name`` with defaults if allowed (Metadata); the topic, or the code to answer with."""
        ...

    async def create_topics(
        self, requests: Sequence[TopicRequest], *, validate_only: bool, timeout_ms: int
    ) -> list[Outcome]:
        ...

    async def delete_topics(self, names: Sequence[str], *, timeout_ms: int) -> list[Outcome]:
        ...

    async def create_partitions(
        self, requests: Sequence[PartitionsRequest], *, validate_only: bool, timeout_ms: int
    ) -> list[Outcome]:
        ...

    async def topic_configs(self, name: str) -> dict[str, str]:
        """The topic's overrides; :class:`UnknownTopicError` if it does not exist."""
        ...

    async def alter_topic_configs(self, name: str, configs: Mapping[str, str | None], *, validate_only: bool) -> None:
        """Replace every override (AlterConfigs); raises the error to answer with."""
        ...

    async def incremental_alter_topic_configs(self, name: str, ops: Sequence[ConfigOp], *, validate_only: bool) -> None:
        ...

    async def elect_preferred_leaders(
        self, partitions: Sequence[TopicPartition] | None, *, timeout_ms: int
    ) -> dict[TopicPartition, Outcome]:
        """Per partition; for ``None`` (every partition) only those that needed an election or failed."""
        ...

    async def alter_partition_reassignments(
        self, targets: Mapping[TopicPartition, Sequence[int] | None]
    ) -> dict[TopicPartition, Outcome]:
        """Start moving each partition to its target replicas; ``None`` cancels a pending move."""
        ...

    async def list_partition_reassignments(
        self, partitions: Sequence[TopicPartition] | None
    ) -> dict[TopicPartition, OngoingReassignment]:
        ...


async def async_outcome(action: Callable[..., Awaitable[object]], *args: Any, where: str,
                        **kwargs: Any) -> Outcome:
    """:func:`~broker_core.server.errors.outcome` of a coroutine function."""
    try:
        await action(*args, **kwargs)
    except Exception as exc:
        return error_code_for(exc, where=where), str(exc)
    return OK


def check_reassignment_target(tp: TopicPartition, current: Sequence[int], target: Sequence[int],
                              alive: set[int]) -> None:
    """Kafka's checks of one target replica list: non-empty, distinct, valid ids, added replicas alive."""
    if not target:
        raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"{tp}: the target replica list is empty")
    if len(set(target)) != len(target):
        raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"{tp}: duplicate broker ids in {list(target)}")
    if any(broker < 0 for broker in target):
        raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"{tp}: invalid broker id in {list(target)}")
    unknown = sorted(set(target) - set(current) - alive)
    if unknown:
        raise KafkaError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"{tp}: broker(s) {unknown} are not alive (live brokers: {sorted(alive)})",
        )


class EmbeddedTopicAdmin:
    """:class:`TopicAdmin` of the single-node broker: everything is applied before the answer."""

    def __init__(self, topics: TopicManager, store: MetadataStore, view: MetadataView, config: BrokerConfig) -> None:
        self._topics = topics
        self._store = store
        self._view = view
        self._config = config

    def auto_create(self, name: str) -> TopicMetadata | ErrorCode:
        """The new topic; LEADER_NOT_AVAILABLE while another request creates it; else Kafka's answer to a
        refused auto-creation: the error of the refusal (POLICY_VIOLATION past a partition limit, ...)."""
        try:
            created = self._topics.auto_create(name)
        except TopicExistsError:
            return ErrorCode.LEADER_NOT_AVAILABLE
        except Exception as exc:
            code = error_code_for(exc, where="auto_create")
            logger.warning("cannot auto-create topic %s: %s", name, exc)
            return code
        if created is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return self._view.get_topic(name)

    async def create_topics(
        self, requests: Sequence[TopicRequest], *, validate_only: bool, timeout_ms: int
    ) -> list[Outcome]:
        return [
            await async_outcome(self._topics.create_topic_async, request, validate_only=validate_only,
                                where="create_topics")
            for request in requests
        ]

    async def delete_topics(self, names: Sequence[str], *, timeout_ms: int) -> list[Outcome]:
        return [(outcome(self._topics.delete_topic, name, where="delete_topics")[0], None) for name in names]

    async def create_partitions(
        self, requests: Sequence[PartitionsRequest], *, validate_only: bool, timeout_ms: int
    ) -> list[Outcome]:
        return [
            await async_outcome(self._topics.create_partitions_async, r.name, r.count, r.assignment,
                                validate_only=validate_only, where="create_partitions")
            for r in requests
        ]

    async def topic_configs(self, name: str) -> dict[str, str]:
        return self._store.get_topic_configs(name)

    async def alter_topic_configs(self, name: str, configs: Mapping[str, str | None], *, validate_only: bool) -> None:
        self._topics.alter_configs(name, configs, validate_only=validate_only)

    async def incremental_alter_topic_configs(self, name: str, ops: Sequence[ConfigOp], *, validate_only: bool) -> None:
        updated = apply_incremental_ops(self._config, self._store.get_topic_configs(name), ops)
        self._topics.alter_configs(name, updated, validate_only=validate_only)

    async def elect_preferred_leaders(
        self, partitions: Sequence[TopicPartition] | None, *, timeout_ms: int
    ) -> dict[TopicPartition, Outcome]:
        wanted = partitions if partitions is not None else self._all_partitions()
        results: dict[TopicPartition, Outcome] = {}
        for tp in wanted:
            state = partition_of(self._view, tp.topic, tp.partition)
            if state is None:
                results[tp] = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{tp} does not exist")
            elif state.replicas and state.leader == state.replicas[0]:
                results[tp] = (ErrorCode.ELECTION_NOT_NEEDED, "the preferred replica already leads")
            else:
                results[tp] = (ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, f"{tp}: the preferred replica cannot lead")
        if partitions is None:
            return {tp: r for tp, r in results.items() if r[0] != ErrorCode.ELECTION_NOT_NEEDED}
        return results

    async def alter_partition_reassignments(
        self, targets: Mapping[TopicPartition, Sequence[int] | None]
    ) -> dict[TopicPartition, Outcome]:
        """One broker holds every replica: the only valid target is the current one, a no-op."""
        alive = {b.broker_id for b in self._view.alive_brokers()}
        results: dict[TopicPartition, Outcome] = {}
        for tp, target in targets.items():
            state = partition_of(self._view, tp.topic, tp.partition)
            if state is None:
                results[tp] = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{tp} does not exist")
            elif target is None:
                results[tp] = (ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, f"{tp} is not being reassigned")
            else:
                results[tp] = outcome(check_reassignment_target, tp, state.replicas, target, alive,
                                      where="alter_partition_reassignments")
        return results

    async def list_partition_reassignments(
        self, partitions: Sequence[TopicPartition] | None
    ) -> dict[TopicPartition, OngoingReassignment]:
        return {}

    def _all_partitions(self) -> list[TopicPartition]:
        found = []
        for name in self._view.topic_names():
            try:
                found.extend(TopicPartition(name, p) for p in self._view.get_topic(name).partitions)
            except UnknownTopicError:
                continue
        return found
