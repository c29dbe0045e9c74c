"""Spate's admin client: topics, partitions, configs, records, offsets, groups and the cluster.

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
group's coordinator (see :mod:`spate.client.admin.group_admin`), config
calls to the broker concerned (see :mod:`spate.client.admin.config_admin`),
elections and reassignments to any broker (see
:mod:`spate.client.admin.cluster_admin`).
"""

from __future__ import annotations

import random
import socket
import time
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

from spate.client.admin.acl_admin import AclAdmin, AclBinding, AclBindingFilter
from spate.client.admin.admin_config import AdminConfig
from spate.client.admin.admin_types import (
    AlterConfigOp,
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    ElectionType,
    GroupDescription,
    GroupListing,
    NewTopic,
    PartitionReassignment,
    TopicDescription,
)
from spate.client.admin.cluster_admin import ClusterAdmin, controller_node
from spate.client.admin.config_admin import ConfigAdmin
from spate.client.admin.group_admin import GroupAdmin
from spate.client.admin.log_dirs_admin import LogDirsAdmin
from spate.client.admin.quota_admin import ClientQuotaAlteration, ClientQuotaEntry, QuotaAdmin
from spate.client.admin.scram_admin import (
    ScramAdmin,
    ScramCredentialInfo,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from spate.client.admin.transaction_admin import (
    ProducerState,
    TransactionAdmin,
    TransactionDescription,
    TransactionListing,
)
from spate.client.config import timeout_seconds
from spate.client.consumer.list_offsets import list_offsets
from spate.client.errors import AdminError, ClientClosedError
from spate.client.net.connection import SocketFactory
from spate.client.net.network_client import NetworkClient
from spate.client.net.retry import KeyedCall, Retrier
from spate.protocol import ApiKey, ErrorCode, KafkaError
from spate.protocol.messages.create_partitions import CreatePartitionsRequest
from spate.protocol.messages.create_topics import CreateTopicsRequest
from spate.protocol.messages.delete_records import DeleteRecordsRequest
from spate.protocol.messages.delete_topics import DeleteTopicsRequest
from spate.structs import IsolationLevel, OffsetAndMetadata, OffsetAndTimestamp, TopicPartition, group_by_topic

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
        self._retrier = Retrier(
            self._network.backoff, clock, before_retry=lambda _: self._network.metadata.request_update()
        )
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
            lambda left, operation_timeout_ms: CreateTopicsRequest(
                topics=[_creatable(topic) for topic in left.values()],
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
            lambda left, operation_timeout_ms: DeleteTopicsRequest(topic_names=list(left), timeout_ms=operation_timeout_ms),
            lambda response: [(r.name, r.error_code, None) for r in response.responses],
            timeout_ms,
        )

    def list_topics(self, *, include_internal: bool = False, timeout_ms: float | None = None) -> list[str]:
        """Names of every topic, sorted; internal ones (``__consumer_offsets``...) only if asked."""
        snapshot = self._retry(
            "list_topics",
            lambda deadline: self._network.fetch_metadata(None, deadline=deadline),
            timeout_ms,
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
            timeout_ms,
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
            lambda left, operation_timeout_ms: CreatePartitionsRequest(
                topics=[CreatePartitionsRequest.CreatePartitionsTopic(name=name, count=count, assignments=None)
                        for name, count in left.items()],
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
        wanted = [resources] if isinstance(resources, ConfigResource) else list(resources)
        return self._config_admin().describe_configs(wanted, include_synonyms, self._deadline(timeout_ms))

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
        self._config_admin().alter_configs(configs, validate_only, self._deadline(timeout_ms))

    def incremental_alter_configs(
        self,
        changes: Mapping[ConfigResource, Iterable[AlterConfigOp]],
        *,
        validate_only: bool = False,
        timeout_ms: float | None = None,
    ) -> None:
        """Set, delete, append to or subtract from single keys; keys not named keep their values.

        Raises :class:`~spate.client.errors.UnsupportedApiError` (changing nothing) when the broker does
        not serve IncrementalAlterConfigs; :meth:`alter_configs` is the older way.
        """
        self._config_admin().incremental_alter_configs(changes, validate_only, self._deadline(timeout_ms))

    # --- records and offsets ------------------------------------------------------------------------

    def delete_records(
        self, before: Mapping[TopicPartition, int], *, timeout_ms: float | None = None
    ) -> dict[TopicPartition, int]:
        """Delete every record below the given offset (-1: the high watermark); returns new low watermarks."""
        call: KeyedCall[TopicPartition] = KeyedCall(before)

        def attempt(deadline: float) -> None:
            snapshot = self._network.fetch_metadata({tp.topic for tp in call.pending}, deadline=deadline)
            by_leader, leaderless = snapshot.by_leader(call.pending)
            for tp in leaderless:
                count = snapshot.partition_count(tp.topic)
                if count is None or tp.partition >= count:
                    code = snapshot.topic_errors.get(tp.topic, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                    call.fail(tp, KafkaError(code, f"delete records of {tp}"))
                else:
                    call.retry(KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, f"no leader for {tp}"))
            for node, partitions in by_leader.items():
                self._delete_records_on(node, partitions, call, deadline)

        return self._retry_each("delete_records", call, attempt, timeout_ms).results

    def _delete_records_on(
        self, node: int, partitions: list[TopicPartition], call: KeyedCall[TopicPartition], deadline: float
    ) -> None:
        by_topic = group_by_topic(
            partitions,
            value=lambda tp: DeleteRecordsRequest.DeleteRecordsPartition(
                partition_index=tp.partition, offset=call.pending[tp]
            ),
        )
        body = DeleteRecordsRequest(
            topics=[DeleteRecordsRequest.DeleteRecordsTopic(name=n, partitions=p) for n, p in by_topic.items()],
            timeout_ms=self._operation_timeout_ms(deadline),
        )
        _, response = self._network.request(node, ApiKey.DELETE_RECORDS, body, deadline=deadline)
        for topic in response.topics:
            for part in topic.partitions:
                tp = TopicPartition(topic.name, part.partition_index)
                if tp not in call:
                    continue
                code = ErrorCode.of(part.error_code)
                if code == ErrorCode.NONE:
                    call.succeed(tp, part.low_watermark)
                elif code.retriable:
                    call.retry(KafkaError(code, f"delete records of {tp}"))
                else:
                    call.fail(tp, KafkaError(code, f"delete records of {tp} below {call.pending[tp]}"))

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
        """The cluster id, the controller and the live brokers (with racks).

        Asked with DescribeCluster where the broker serves it, else with Metadata.
        """
        return self._cluster_admin().describe_cluster(self._deadline(timeout_ms))

    def elect_leaders(
        self,
        election_type: str | ElectionType = "preferred",
        partitions: Iterable[TopicPartition] | None = None,
        *,
        timeout_ms: float | None = None,
    ) -> dict[TopicPartition, ErrorCode]:
        """Elect leaders (``"preferred"``: the first replica; ``"unclean"``) for ``partitions`` (None: all).

        Returns, per partition, NONE (elected) or ELECTION_NOT_NEEDED (the
        wanted replica already leads); other answers (UNKNOWN_TOPIC_OR_PARTITION,
        PREFERRED_LEADER_NOT_AVAILABLE, ...) raise AdminError.
        """
        kind = ElectionType.parse(election_type)
        return self._cluster_admin().elect_leaders(kind, partitions, self._deadline(timeout_ms))

    def alter_partition_reassignments(
        self, reassignments: Mapping[TopicPartition, Sequence[int] | None], *, timeout_ms: float | None = None
    ) -> None:
        """Move each partition to the given replicas (broker ids, preferred first); None cancels a move.

        Returns once the brokers accepted the moves; they complete in the
        background (see :meth:`list_partition_reassignments`).
        """
        self._cluster_admin().alter_partition_reassignments(reassignments, self._deadline(timeout_ms))

    def list_partition_reassignments(
        self, partitions: Iterable[TopicPartition] | None = None, *, timeout_ms: float | None = None
    ) -> dict[TopicPartition, PartitionReassignment]:
        """The reassignments in progress among ``partitions`` (None: every one), by partition."""
        return self._cluster_admin().list_partition_reassignments(partitions, self._deadline(timeout_ms))

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

    # --- SCRAM users ---------------------------------------------------------------------------------

    def describe_user_scram_credentials(self, users: Iterable[str] | None = None, *,
                                        timeout_ms: float | None = None) -> dict[str, list[ScramCredentialInfo]]:
        """Each user's SCRAM mechanisms and iteration counts; ``None`` lists every user with credentials."""
        self._check_open()
        return ScramAdmin(self._network, self._retrier).describe(users, self._deadline(timeout_ms))

    def alter_user_scram_credentials(
        self, changes: Iterable[UserScramCredentialUpsertion | UserScramCredentialDeletion], *,
        timeout_ms: float | None = None,
    ) -> None:
        """Add or replace (salted on this side) and delete SCRAM credentials; AdminError names refused users."""
        self._check_open()
        ScramAdmin(self._network, self._retrier).alter(list(changes), self._deadline(timeout_ms))

    # --- transactions (KIP-664) ---------------------------------------------------------------------

    def describe_producers(
        self, partitions: Iterable[TopicPartition], *, timeout_ms: float | None = None
    ) -> dict[TopicPartition, list[ProducerState]]:
        """The producers each partition's leader remembers, with the first offset of any open transaction."""
        return self._transaction_admin().describe_producers(partitions, self._deadline(timeout_ms))

    def describe_transactions(
        self, transactional_ids: str | Iterable[str], *, timeout_ms: float | None = None
    ) -> dict[str, TransactionDescription]:
        """Each transactional id as its coordinator holds it (TRANSACTIONAL_ID_NOT_FOUND raised as AdminError)."""
        ids = [transactional_ids] if isinstance(transactional_ids, str) else list(transactional_ids)
        return self._transaction_admin().describe_transactions(ids, self._deadline(timeout_ms))

    def list_transactions(
        self,
        *,
        states: Iterable[str] = (),
        producer_ids: Iterable[int] = (),
        duration_ms: int = -1,
        timeout_ms: float | None = None,
    ) -> list[TransactionListing]:
        """Every broker's transactional ids, sorted; filters by state name, producer id and minimum open time."""
        return self._transaction_admin().list_transactions(
            self._deadline(timeout_ms), states=states, producer_ids=producer_ids, duration_ms=duration_ms
        )

    # --- log dirs ----------------------------------------------------------------------------------

    def partition_sizes(
        self, partitions: Iterable[TopicPartition], *, timeout_ms: float | None = None
    ) -> dict[TopicPartition, int]:
        """Bytes each partition's log takes on its leader (DescribeLogDirs); partitions the leaders cannot
        report (no leader, an offline log dir) are left out."""
        self._check_open()
        return LogDirsAdmin(self._network, self._retrier).partition_sizes(partitions, self._deadline(timeout_ms))

    def _transaction_admin(self) -> TransactionAdmin:
        self._check_open()
        return TransactionAdmin(self._network, self._retrier)
    def describe_client_quotas(self, components: Mapping[str, str | None], *, strict: bool = False,
                               timeout_ms: float | None = None) -> list[ClientQuotaEntry]:
        """Quotas of the entities matching ``components`` (type -> name, None for the default, or ``ANY``)."""
        self._check_open()
        return QuotaAdmin(self._network, self._retrier).describe(components, strict, self._deadline(timeout_ms))

    def alter_client_quotas(self, alterations: Iterable[ClientQuotaAlteration], *, validate_only: bool = False,
                            timeout_ms: float | None = None) -> None:
        """Set or remove (None) quota keys of entities; AdminError names the refused entities."""
        self._check_open()
        QuotaAdmin(self._network, self._retrier).alter(list(alterations), validate_only,
                                                       self._deadline(timeout_ms))

    def _group_admin(self) -> GroupAdmin:
        self._check_open()
        return GroupAdmin(self._network, self._retrier)

    def _config_admin(self) -> ConfigAdmin:
        self._check_open()
        return ConfigAdmin(self._network, self._retrier)

    def _cluster_admin(self) -> ClusterAdmin:
        self._check_open()
        return ClusterAdmin(self._network, self._retrier)

    # --- ACLs ---------------------------------------------------------------------------------------

    def create_acls(self, bindings: Iterable[AclBinding], *, timeout_ms: float | None = None) -> None:
        """Add ACLs (CreateAcls); AdminError names each refused binding."""
        self._check_open()
        AclAdmin(self._network, self._retrier).create(bindings, self._deadline(timeout_ms))

    def describe_acls(self, acl_filter: AclBindingFilter = AclBindingFilter(), *,
                      timeout_ms: float | None = None) -> list[AclBinding]:
        """The ACLs the filter matches (every ACL by default)."""
        self._check_open()
        return AclAdmin(self._network, self._retrier).describe(acl_filter, self._deadline(timeout_ms))

    def delete_acls(self, filters: Iterable[AclBindingFilter], *, timeout_ms: float | None = None) -> list[AclBinding]:
        """Remove the ACLs each filter matches; returns those removed."""
        self._check_open()
        return AclAdmin(self._network, self._retrier).delete(filters, self._deadline(timeout_ms))

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

    def _retry(self, what: str, attempt: Callable[[float], T], timeout_ms: float | None) -> T:
        self._check_open()
        return self._retrier.call(what, attempt, self._deadline(timeout_ms))

    def _retry_each(
        self, what: str, call: KeyedCall[Any], attempt: Callable[[float], None], timeout_ms: float | None
    ) -> KeyedCall[Any]:
        self._check_open()
        return self._retrier.call_each(what, call, attempt, self._deadline(timeout_ms))

    def _on_controller(
        self,
        operation: str,
        action: str,
        pending: dict[str, Any],
        api_key: ApiKey,
        body: Callable[[dict[str, Any], int], Any],
        answers: Callable[[Any], list[tuple[str, int, str | None]]],
        timeout_ms: float | None,
    ) -> None:
        """Send ``body(topics left, operation timeout)`` to the controller until every topic is settled.

        Topics leave ``pending`` as they succeed or are refused, so a retry
        asks only for the rest; refusals are raised together as one AdminError.
        """
        call: KeyedCall[str] = KeyedCall(pending)

        def attempt(deadline: float) -> None:
            node = controller_node(self._network, deadline)
            request = body(call.pending, self._operation_timeout_ms(deadline))
            _, response = self._network.request(node, api_key, request, deadline=deadline)
            for name, error_code, message in answers(response):
                call.settle(name, ErrorCode.of(error_code), message or f"{action} {name}", retry_on=_RETRY_TOPIC_CHANGE)

        self._retry_each(operation, call, attempt, timeout_ms)


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
