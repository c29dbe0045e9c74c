"""Spate's admin client: topics, partitions, configs, records, offsets and the cluster.

::

    with Admin("127.0.0.1:9092") as admin:
        admin.create_topics([NewTopic("orders", num_partitions=6, configs={"retention.ms": "86400000"})])
        admin.describe_topics(["orders"])["orders"].partitions[0].leader

Every call blocks until it is done or its ``timeout_ms`` (default
``default_api_timeout_ms``) passes, retrying retriable failures (lost
connections, NOT_CONTROLLER, a leader that moved) with backoff. A call that
names several resources succeeds for the resources that can succeed and
then raises :class:`AdminError` listing the ones that failed, each with its
own Kafka error (TOPIC_ALREADY_EXISTS, UNKNOWN_TOPIC_OR_PARTITION,
INVALID_PARTITIONS, INVALID_CONFIG, ...); ``exc.code`` is the first
failure's code. Single-threaded, like the consumer. Group calls go to the
group's coordinator (see :mod:`spate.client.admin.group_admin`).
"""

from __future__ import annotations

import random
import socket
import time
from collections import defaultdict
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

from spate.client.admin.admin_config import AdminConfig
from spate.client.admin.admin_types import (
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    ConfigResourceType,
    GroupDescription,
    GroupListing,
    NewTopic,
    TopicDescription,
)
from spate.client.admin.group_admin import GroupAdmin
from spate.client.config import timeout_seconds
from spate.client.errors import AdminError, ClientClosedError
from spate.client.list_offsets import list_offsets
from spate.client.net.connection import SocketFactory
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import retry_until
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.alter_configs import AlterConfigsRequest
from spate.protocol.messages.create_partitions import CreatePartitionsRequest
from spate.protocol.messages.create_topics import CreateTopicsRequest
from spate.protocol.messages.delete_records import DeleteRecordsRequest
from spate.protocol.messages.delete_topics import DeleteTopicsRequest
from spate.protocol.messages.describe_configs import ConfigSource, DescribeConfigsRequest
from spate.structs import IsolationLevel, OffsetAndMetadata, OffsetAndTimestamp, TopicPartition

T = TypeVar("T")

# Retried by the admin calls that change topics; REQUEST_TIMED_OUT is not, as the
# change may have been made (a retry would then report TOPIC_ALREADY_EXISTS).
_RETRY_TOPIC_CHANGE = frozenset(
    {ErrorCode.NOT_CONTROLLER, ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}
)


class Admin:
    def __init__(
        self,
        bootstrap_servers: str | Sequence[str],
        *,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        socket_factory: SocketFactory = socket.create_connection,
        **options: Any,
    ) -> None:
        """Create an admin client (no connection is made until it is used).

        ``options`` are its settings (``request_timeout_ms``,
        ``default_api_timeout_ms``, ``retry_backoff_ms``, ...): see
        :class:`~spate.client.admin.admin_config.AdminConfig`. ``clock``,
        ``rng`` and ``socket_factory`` are for tests.
        """
        config = AdminConfig.from_options("Admin", options)
        self._clock = clock
        self._api_timeout = config.default_api_timeout
        self._network = NetworkClient(bootstrap_servers, config, clock=clock, rng=rng, socket_factory=socket_factory)
        self._closed = False

    # --- topics -------------------------------------------------------------------------------------

    def create_topics(
        self, topics: NewTopic | Iterable[NewTopic], *, timeout_ms: float | None = None, validate_only: bool = False
    ) -> None:
        """Create topics; with ``validate_only`` the broker only checks the request."""
        pending = {t.name: t for t in ([topics] if isinstance(topics, NewTopic) else topics)}
        self._on_controller(
            "create_topics",
            "create topic",
            pending,
            ApiKey.CREATE_TOPICS,
            lambda operation_timeout_ms: CreateTopicsRequest(
                topics=[_creatable(topic) for topic in pending.values()],
                timeout_ms=operation_timeout_ms,
                validate_only=validate_only,
            ),
            lambda response: [(r.name, r.error_code, r.error_message) for r in response.topics],
            timeout_ms,
        )

    def delete_topics(self, names: str | Iterable[str], *, timeout_ms: float | None = None) -> None:
        pending = {name: name for name in ([names] if isinstance(names, str) else names)}
        self._on_controller(
            "delete_topics",
            "delete topic",
            pending,
            ApiKey.DELETE_TOPICS,
            lambda operation_timeout_ms: DeleteTopicsRequest(topic_names=list(pending), timeout_ms=operation_timeout_ms),
            lambda response: [(r.name, r.error_code, None) for r in response.responses],
            timeout_ms,
        )

    def list_topics(self, *, include_internal: bool = False, timeout_ms: float | None = None) -> list[str]:
        """Names of every topic, sorted; internal ones (``__consumer_offsets``...) only if asked."""
        snapshot = self._retry(
            "list_topics",
            lambda deadline: self._network.fetch_metadata(None, deadline=deadline),
            self._deadline(timeout_ms),
        )
        return sorted(name for name, t in snapshot.topics.items() if include_internal or not t.is_internal)

    def describe_topics(
        self, names: Iterable[str] | None = None, *, timeout_ms: float | None = None
    ) -> dict[str, TopicDescription]:
        """Partitions, leaders, replicas and ISR of the named topics (None: every topic)."""
        wanted = None if names is None else list(dict.fromkeys([names] if isinstance(names, str) else names))
        snapshot = self._retry(
            "describe_topics",
            lambda deadline: self._network.fetch_metadata(wanted, deadline=deadline),
            self._deadline(timeout_ms),
        )
        if wanted is None:
            return dict(sorted(snapshot.topics.items()))
        errors = {
            name: KafkaError(snapshot.topic_errors.get(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), f"topic {name}")
            for name in wanted
            if name not in snapshot.topics
        }
        if errors:
            raise AdminError("describe_topics", errors)
        return {name: snapshot.topics[name] for name in wanted}

    def create_partitions(
        self, new_totals: Mapping[str, int], *, timeout_ms: float | None = None, validate_only: bool = False
    ) -> None:
        """Grow each topic to the given total number of partitions."""
        pending = dict(new_totals)
        self._on_controller(
            "create_partitions",
            "create partitions for",
            pending,
            ApiKey.CREATE_PARTITIONS,
            lambda operation_timeout_ms: CreatePartitionsRequest(
                topics=[CreatePartitionsRequest.CreatePartitionsTopic(name=name, count=count, assignments=None)
                        for name, count in pending.items()],
                timeout_ms=operation_timeout_ms,
                validate_only=validate_only,
            ),
            lambda response: [(r.name, r.error_code, r.error_message) for r in response.results],
            timeout_ms,
        )

    # --- configs ------------------------------------------------------------------------------------

    def describe_configs(
        self,
        resources: ConfigResource | Iterable[ConfigResource],
        *,
        include_synonyms: bool = False,
        timeout_ms: float | None = None,
    ) -> dict[ConfigResource, dict[str, ConfigEntry]]:
        """Every config of each topic or broker, with its value and source."""
        pending = {r: r for r in ([resources] if isinstance(resources, ConfigResource) else resources)}
        results: dict[ConfigResource, dict[str, ConfigEntry]] = {}
        errors: dict[Any, KafkaError] = {}

        def attempt(deadline: float) -> None:
            groups = self._by_config_node(list(pending), deadline, errors)
            for resource in errors:
                pending.pop(resource, None)
            for node, group in groups.items():
                body = DescribeConfigsRequest(
                    resources=[
                        DescribeConfigsRequest.DescribeConfigsResource(
                            resource_type=int(r.type), resource_name=r.name, configuration_keys=None
                        )
                        for r in group
                    ],
                    include_synonyms=include_synonyms,
                )
                _, response = self._network.request(node, ApiKey.DESCRIBE_CONFIGS, body, deadline=deadline)
                for result in response.results:
                    resource = ConfigResource(ConfigResourceType(result.resource_type), result.resource_name)
                    code = ErrorCode.of(result.error_code)
                    if resource not in pending:
                        continue
                    del pending[resource]
                    if code == ErrorCode.NONE:
                        results[resource] = {c.name: _config_entry(c) for c in result.configs}
                    else:
                        errors[resource] = KafkaError(code, result.error_message or f"describe configs of {resource}")

        self._retry("describe_configs", attempt, self._deadline(timeout_ms))
        if errors:
            raise AdminError("describe_configs", errors)
        return results

    def alter_configs(
        self,
        configs: Mapping[ConfigResource, Mapping[str, str | None]],
        *,
        validate_only: bool = False,
        timeout_ms: float | None = None,
    ) -> None:
        """Replace each resource's overrides with the given set (Kafka's AlterConfigs, not incremental).

        Configs left out return to their defaults.
        """
        pending = dict(configs)
        errors: dict[Any, KafkaError] = {}

        def attempt(deadline: float) -> None:
            groups = self._by_config_node(list(pending), deadline, errors)
            for resource in errors:
                pending.pop(resource, None)
            for node, group in groups.items():
                body = AlterConfigsRequest(
                    resources=[
                        AlterConfigsRequest.AlterConfigsResource(
                            resource_type=int(r.type),
                            resource_name=r.name,
                            configs=[AlterConfigsRequest.AlterableConfig(name=k, value=v) for k, v in pending[r].items()],
                        )
                        for r in group
                    ],
                    validate_only=validate_only,
                )
                _, response = self._network.request(node, ApiKey.ALTER_CONFIGS, body, deadline=deadline)
                for result in response.responses:
                    resource = ConfigResource(ConfigResourceType(result.resource_type), result.resource_name)
                    if resource not in pending:
                        continue
                    del pending[resource]
                    code = ErrorCode.of(result.error_code)
                    if code != ErrorCode.NONE:
                        errors[resource] = KafkaError(code, result.error_message or f"alter configs of {resource}")

        self._retry("alter_configs", attempt, self._deadline(timeout_ms))
        if errors:
            raise AdminError("alter_configs", errors)

    # --- records and offsets ------------------------------------------------------------------------

    def delete_records(
        self, before: Mapping[TopicPartition, int], *, timeout_ms: float | None = None
    ) -> dict[TopicPartition, int]:
        """Delete every record below the given offset (-1: the high watermark); returns new low watermarks."""
        pending = dict(before)
        low_watermarks: dict[TopicPartition, int] = {}
        errors: dict[Any, KafkaError] = {}

        def attempt(deadline: float) -> None:
            snapshot = self._network.fetch_metadata({tp.topic for tp in pending}, deadline=deadline)
            by_leader: dict[int, list[TopicPartition]] = defaultdict(list)
            retry: KafkaError | None = None
            for tp in list(pending):
                leader = snapshot.leader(tp.topic, tp.partition)
                count = snapshot.partition_count(tp.topic)
                if leader >= 0:
                    by_leader[leader].append(tp)
                elif count is None or tp.partition >= count:
                    code = snapshot.topic_errors.get(tp.topic, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                    errors[tp] = KafkaError(code, f"delete records of {tp}")
                    del pending[tp]
                else:
                    retry = KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, f"no leader for {tp}")
            for node, partitions in by_leader.items():
                topics: dict[str, list[Any]] = defaultdict(list)
                for tp in partitions:
                    topics[tp.topic].append(
                        DeleteRecordsRequest.DeleteRecordsPartition(partition_index=tp.partition, offset=pending[tp])
                    )
                body = DeleteRecordsRequest(
                    topics=[DeleteRecordsRequest.DeleteRecordsTopic(name=n, partitions=p) for n, p in topics.items()],
                    timeout_ms=self._operation_timeout_ms(deadline),
                )
                _, response = self._network.request(node, ApiKey.DELETE_RECORDS, body, deadline=deadline)
                for topic in response.topics:
                    for part in topic.partitions:
                        tp = TopicPartition(topic.name, part.partition_index)
                        if tp not in pending:
                            continue
                        code = ErrorCode.of(part.error_code)
                        if code == ErrorCode.NONE:
                            low_watermarks[tp] = part.low_watermark
                            del pending[tp]
                        elif code.retriable:
                            retry = KafkaError(code, f"delete records of {tp}")
                        else:
                            errors[tp] = KafkaError(code, f"delete records of {tp} below {pending.pop(tp)}")
            if retry is not None:
                raise retry

        self._retry("delete_records", attempt, self._deadline(timeout_ms))
        if errors:
            raise AdminError("delete_records", errors)
        return low_watermarks

    def list_offsets(
        self,
        specs: Mapping[TopicPartition, int],
        *,
        isolation_level: str = "read_uncommitted",
        timeout_ms: float | None = None,
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """Offsets by spec: ``EARLIEST`` (-2), ``LATEST`` (-1) or a timestamp in ms.

        A timestamp with no record at or after it gives None.
        """
        self._check_open()
        return list_offsets(
            self._network,
            dict(specs),
            isolation_level=IsolationLevel.parse(isolation_level),
            deadline=self._deadline(timeout_ms),
            what="list_offsets",
        )

    # --- cluster ------------------------------------------------------------------------------------

    def describe_cluster(self, *, timeout_ms: float | None = None) -> ClusterDescription:
        snapshot = self._retry(
            "describe_cluster",
            lambda deadline: self._network.fetch_metadata([], deadline=deadline),
            self._deadline(timeout_ms),
        )
        return snapshot.describe_cluster()

    # --- consumer groups ----------------------------------------------------------------------------

    def list_groups(self, *, timeout_ms: float | None = None) -> list[GroupListing]:
        """Every group of every broker, sorted by id."""
        return self._group_admin().list_groups(self._deadline(timeout_ms))

    def describe_groups(
        self, group_ids: str | Iterable[str], *, timeout_ms: float | None = None
    ) -> dict[str, GroupDescription]:
        """State, protocol and members (with decoded assignments) of each group.

        A group no coordinator knows comes back in state ``Dead`` (``exists`` is False).
        """
        ids = [group_ids] if isinstance(group_ids, str) else list(group_ids)
        return self._group_admin().describe_groups(ids, self._deadline(timeout_ms))

    def list_group_offsets(
        self,
        group_id: str,
        partitions: Iterable[TopicPartition] | None = None,
        *,
        timeout_ms: float | None = None,
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """The group's committed offsets (None: every partition it committed); uncommitted ones are left out."""
        return self._group_admin().list_group_offsets(group_id, partitions, self._deadline(timeout_ms))

    def alter_group_offsets(
        self,
        group_id: str,
        offsets: Mapping[TopicPartition, OffsetAndMetadata | int],
        *,
        timeout_ms: float | None = None,
    ) -> None:
        """Commit offsets for a group from outside it: only allowed while the group has no members.

        A group with members refuses with UNKNOWN_MEMBER_ID (or
        ILLEGAL_GENERATION / REBALANCE_IN_PROGRESS), raised as AdminError.
        """
        self._group_admin().alter_group_offsets(group_id, offsets, self._deadline(timeout_ms))

    def delete_groups(self, group_ids: str | Iterable[str], *, timeout_ms: float | None = None) -> None:
        """Delete empty groups and their offsets (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP otherwise)."""
        ids = [group_ids] if isinstance(group_ids, str) else list(group_ids)
        self._group_admin().delete_groups(ids, self._deadline(timeout_ms))

    def delete_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition], *, timeout_ms: float | None = None
    ) -> None:
        """Delete committed offsets of topics the group does not consume (GROUP_SUBSCRIBED_TO_TOPIC otherwise)."""
        self._group_admin().delete_group_offsets(group_id, partitions, self._deadline(timeout_ms))

    def _group_admin(self) -> GroupAdmin:
        self._check_open()
        return GroupAdmin(self._network, self._retry)

    # --- lifecycle ----------------------------------------------------------------------------------

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._network.close()

    def __enter__(self) -> Admin:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # --- helpers ------------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ClientClosedError("the admin client is closed")

    def _deadline(self, timeout_ms: float | None) -> float:
        return self._clock() + timeout_seconds(timeout_ms, self._api_timeout)

    def _operation_timeout_ms(self, deadline: float) -> int:
        return max(1, int((deadline - self._clock()) * 1000))

    def _retry(self, what: str, attempt: Callable[[float], T], deadline: float) -> T:
        self._check_open()
        return retry_until(
            deadline,
            attempt,
            self._network.backoff,
            what=what,
            clock=self._clock,
            before_retry=lambda _: self._network.metadata.request_update(),
        )

    def _controller(self, deadline: float) -> int:
        """The controller's node id (any reachable broker if the cluster names none)."""
        snapshot = self._network.metadata.snapshot
        if snapshot.controller_id < 0 or self._network.metadata.update_requested:
            snapshot = self._network.fetch_metadata([], deadline=deadline)
        if snapshot.controller_id >= 0 and snapshot.controller_id in snapshot.brokers:
            return snapshot.controller_id
        node = self._network.least_loaded_node(self._clock())
        if node is None:
            raise KafkaError(ErrorCode.NOT_CONTROLLER, "no controller known and no broker reachable")
        return node

    def _by_config_node(
        self, resources: list[ConfigResource], deadline: float, errors: dict[Any, KafkaError]
    ) -> dict[int, list[ConfigResource]]:
        """Broker resources go to that broker, the rest to any broker.

        A broker id the cluster does not list is recorded in ``errors`` (and
        left out) instead of being retried until the timeout.
        """
        snapshot = self._network.metadata.snapshot
        if not snapshot.brokers:
            snapshot = self._network.fetch_metadata([], deadline=deadline)
        groups: dict[int, list[ConfigResource]] = defaultdict(list)
        anywhere: list[ConfigResource] = []
        for resource in resources:
            if resource.type != ConfigResourceType.BROKER or not resource.name:
                anywhere.append(resource)  # topics, and the cluster-wide broker default ("")
            elif resource.name.isdigit() and int(resource.name) in snapshot.brokers:
                groups[int(resource.name)].append(resource)
            else:
                errors[resource] = KafkaError(
                    ErrorCode.BROKER_NOT_AVAILABLE, f"no broker {resource.name!r} in the cluster"
                )
        if anywhere:
            node = self._network.least_loaded_node(self._clock())
            if node is None:
                raise KafkaError(ErrorCode.NETWORK_EXCEPTION, "no broker reachable")
            groups[node].extend(anywhere)
        return groups

    def _on_controller(
        self,
        operation: str,
        action: str,
        pending: dict[str, Any],
        api_key: ApiKey,
        body: Callable[[int], Any],
        answers: Callable[[Any], list[tuple[str, int, str | None]]],
        timeout_ms: float | None,
    ) -> None:
        """Send ``body(operation timeout)`` to the controller until every topic in ``pending`` is settled.

        ``pending`` shrinks as topics succeed or are refused, so a retry asks
        only for the rest; refusals are raised together as one AdminError.
        """
        errors: dict[Any, KafkaError] = {}

        def attempt(deadline: float) -> None:
            node = self._controller(deadline)
            request = body(self._operation_timeout_ms(deadline))
            _, response = self._network.request(node, api_key, request, deadline=deadline)
            self._settle(pending, errors, answers(response), action)

        self._retry(operation, attempt, self._deadline(timeout_ms))
        if errors:
            raise AdminError(operation, errors)

    def _settle(
        self,
        pending: dict[str, Any],
        errors: dict[Any, KafkaError],
        results: list[tuple[str, int, str | None]],
        action: str,
    ) -> None:
        """Record per-topic outcomes; raise a retriable error if some topics must be tried again."""
        retry: KafkaError | None = None
        for name, error_code, message in results:
            if name not in pending:
                continue
            code = ErrorCode.of(error_code)
            if code == ErrorCode.NONE:
                del pending[name]
            elif code in _RETRY_TOPIC_CHANGE:
                retry = KafkaError(code, message or f"{action} {name}")
            else:
                errors[name] = KafkaError(code, message or f"{action} {name}")
                del pending[name]
        if retry is not None:
            raise retry


def _creatable(topic: NewTopic) -> Any:
    assignments = [
        CreateTopicsRequest.CreatableReplicaAssignment(partition_index=p, broker_ids=list(ids))
        for p, ids in sorted((topic.replica_assignment or {}).items())
    ]
    return CreateTopicsRequest.CreatableTopic(
        name=topic.name,
        num_partitions=-1 if assignments else topic.num_partitions,
        replication_factor=-1 if assignments else topic.replication_factor,
        assignments=assignments,
        configs=[CreateTopicsRequest.CreatableTopicConfig(name=k, value=v) for k, v in topic.configs.items()],
    )


def _source(value: int) -> ConfigSource:
    try:
        return ConfigSource(value)
    except ValueError:  # a source newer than this client knows
        return ConfigSource.UNKNOWN


def _config_entry(config: Any) -> ConfigEntry:
    if config.config_source >= 0:
        source = _source(config.config_source)
    else:  # v0 only says whether the value is the default
        source = ConfigSource.DEFAULT_CONFIG if config.is_default else ConfigSource.UNKNOWN
    synonyms = tuple((s.name, s.value, _source(s.source)) for s in config.synonyms)
    return ConfigEntry(config.name, config.value, source, bool(config.read_only), bool(config.is_sensitive), synonyms)
