"""Topic lifecycle on this broker: the metadata store first, then the logs.

Every change is validated completely before anything is written, so a
request that fails leaves neither metadata nor log directories behind.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Mapping, Sequence

from broker_core.cluster.assignment import assign_added_partitions, assign_replicas, validate_assignment
from broker_core.cluster.errors import InvalidPartitionsError, InvalidTopicNameError
from broker_core.cluster.metadata_store import MetadataStore, TopicDescription
from broker_core.cluster.topic_names import is_internal_topic, validate_topic_name
from broker_core.config.broker_config import BrokerConfig
from broker_core.config.topic_config import validate_topic_configs
from broker_core.server.replica_manager import ReplicaManager
from spate.protocol.errors import ErrorCode, KafkaError

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TopicRequest:
    name: str
    num_partitions: int = -1  # -1: num.partitions
    replication_factor: int = -1  # -1: default.replication.factor
    assignment: Mapping[int, Sequence[int]] | None = None
    configs: Mapping[str, str | None] | None = None


class TopicManager:
    def __init__(self, *, store: MetadataStore, replicas: ReplicaManager, config: BrokerConfig) -> None:
        self._store = store
        self._replicas = replicas
        self._config = config

    def live_brokers(self) -> list[int]:
        return sorted(b.broker_id for b in self._store.list_brokers())

    def load_hosted_partitions(self) -> None:
        """Open every partition this broker leads (at start-up)."""
        for name in self._store.list_topics():
            self._open_partitions(self._store.get_topic(name))

    def _open_partitions(self, topic: TopicDescription) -> None:
        for index, state in topic.partitions.items():
            if state.leader == self._replicas.node_id:
                self._replicas.make_leader(topic.name, index, state.leader_epoch, dict(topic.configs))

    def create_topic(self, request: TopicRequest, *, validate_only: bool = False) -> TopicDescription | None:
        validate_topic_name(request.name)
        configs = validate_topic_configs(dict(request.configs or {}))
        assignment = self._assignment_for(request)
        if validate_only:
            return None
        topic = self._store.create_topic(request.name, assignment, configs)
        self._open_partitions(topic)
        logger.info("created topic %s with %d partition(s)", request.name, len(assignment))
        return topic

    def _assignment_for(self, request: TopicRequest) -> dict[int, tuple[int, ...]]:
        brokers = self.live_brokers()
        if request.assignment:
            if request.num_partitions != -1 or request.replication_factor != -1:
                raise KafkaError(
                    ErrorCode.INVALID_REQUEST,
                    "give either a replica assignment or num_partitions/replication_factor, not both",
                )
            assignment = {p: tuple(r) for p, r in request.assignment.items()}
            validate_assignment(assignment, live_brokers=brokers)
            return assignment
        partitions = self._config.get_int("num.partitions") if request.num_partitions == -1 else request.num_partitions
        factor = (
            self._config.get_int("default.replication.factor")
            if request.replication_factor == -1
            else request.replication_factor
        )
        return assign_replicas(brokers, partitions, factor)

    def auto_create(self, name: str) -> TopicDescription | None:
        """Create ``name`` with defaults when ``auto.create.topics.enable`` allows it."""
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

    def create_partitions(
        self, name: str, total: int, assignment: Sequence[Sequence[int]] | None, *, validate_only: bool = False
    ) -> None:
        topic = self._store.get_topic(name)
        current = topic.partition_count
        if total <= current:
            raise InvalidPartitionsError(f"topic {name} has {current} partitions; {total} would not add any")
        if assignment is not None:
            if len(assignment) != total - current:
                raise InvalidPartitionsError(
                    f"assignment names {len(assignment)} new partitions, {total - current} are being added"
                )
            added = {current + i: tuple(replicas) for i, replicas in enumerate(assignment)}
            validate_assignment(added, live_brokers=self.live_brokers(), first_partition=current)
        else:
            added = assign_added_partitions(self.live_brokers(), topic.assignment(), total)
        if validate_only:
            return
        self._open_partitions(self._store.add_partitions(name, added))

    def alter_configs(self, name: str, configs: Mapping[str, str | None], *, validate_only: bool = False) -> None:
        """Replace the topic's overrides (AlterConfigs is not incremental)."""
        self._store.get_topic(name)
        validated = validate_topic_configs(dict(configs))
        if validate_only:
            return
        self._store.set_topic_configs(name, validated)
        self._replicas.update_topic_config(name, validated)
