"""Request handlers, one module per API family (the same names as ``protocol/messages``).

Each handler takes the broker context and a decoded request and returns the
response body, or an awaitable of it when the request must wait (long-poll
fetch, ZooKeeper, the controller). Per-partition failures become error codes
in the response; only a bug escapes as an exception, which closes that
connection.

A broker in a ZooKeeper cluster also serves the controller's requests
(LeaderAndIsr, UpdateMetadata, StopReplica) and ControlledShutdown.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Mapping

from broker_core.server.context import BrokerContext
from broker_core.server.handlers import (
    acls,
    add_offsets_to_txn,
    add_partitions_to_txn,
    alter_client_quotas,
    alter_configs,
    alter_partition_reassignments,
    alter_user_scram_credentials,
    api_versions,
    archive_offsets,
    clean_plan,
    consumer_group_describe,
    consumer_group_heartbeat,
    controlled_shutdown,
    create_partitions,
    create_topics,
    delete_groups,
    delete_records,
    delete_topics,
    describe_client_quotas,
    describe_cluster,
    describe_configs,
    describe_groups,
    describe_log_dirs,
    describe_producers,
    describe_transactions,
    describe_user_scram_credentials,
    elect_leaders,
    end_txn,
    fetch,
    find_coordinator,
    heartbeat,
    incremental_alter_configs,
    init_producer_id,
    join_group,
    leader_and_isr,
    leave_group,
    list_groups,
    list_offsets,
    list_partition_reassignments,
    list_transactions,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    offset_for_leader_epoch,
    produce,
    sasl_authenticate,
    sasl_handshake,
    stop_replica,
    sync_group,
    txn_offset_commit,
    update_metadata,
    write_txn_markers,
)
from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import Request

_HANDLERS: Mapping[ApiKey, Callable[[BrokerContext, Request], Any]] = {
    ApiKey.API_VERSIONS: api_versions.handle,
    ApiKey.SASL_HANDSHAKE: sasl_handshake.handle,
    ApiKey.SASL_AUTHENTICATE: sasl_authenticate.handle,
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: describe_user_scram_credentials.handle,
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: alter_user_scram_credentials.handle,
    ApiKey.DESCRIBE_CLIENT_QUOTAS: describe_client_quotas.handle,
    ApiKey.ALTER_CLIENT_QUOTAS: alter_client_quotas.handle,
    ApiKey.METADATA: metadata.handle,
    ApiKey.PRODUCE: produce.handle,
    ApiKey.FETCH: fetch.handle,
    ApiKey.LIST_OFFSETS: list_offsets.handle,
    ApiKey.CREATE_TOPICS: create_topics.handle,
    ApiKey.DELETE_TOPICS: delete_topics.handle,
    ApiKey.CREATE_PARTITIONS: create_partitions.handle,
    ApiKey.DESCRIBE_CONFIGS: describe_configs.handle,
    ApiKey.ALTER_CONFIGS: alter_configs.handle,
    ApiKey.DELETE_RECORDS: delete_records.handle,
    ApiKey.INIT_PRODUCER_ID: init_producer_id.handle,
    ApiKey.OFFSET_FOR_LEADER_EPOCH: offset_for_leader_epoch.handle,
    ApiKey.FIND_COORDINATOR: find_coordinator.handle,
    ApiKey.JOIN_GROUP: join_group.handle,
    ApiKey.SYNC_GROUP: sync_group.handle,
    ApiKey.HEARTBEAT: heartbeat.handle,
    ApiKey.LEAVE_GROUP: leave_group.handle,
    ApiKey.OFFSET_COMMIT: offset_commit.handle,
    ApiKey.OFFSET_FETCH: offset_fetch.handle,
    ApiKey.DESCRIBE_GROUPS: describe_groups.handle,
    ApiKey.LIST_GROUPS: list_groups.handle,
    ApiKey.DELETE_GROUPS: delete_groups.handle,
    ApiKey.OFFSET_DELETE: offset_delete.handle,
    ApiKey.ADD_PARTITIONS_TO_TXN: add_partitions_to_txn.handle,
    ApiKey.ADD_OFFSETS_TO_TXN: add_offsets_to_txn.handle,
    ApiKey.END_TXN: end_txn.handle,
    ApiKey.TXN_OFFSET_COMMIT: txn_offset_commit.handle,
    ApiKey.WRITE_TXN_MARKERS: write_txn_markers.handle,
    ApiKey.DESCRIBE_CLUSTER: describe_cluster.handle,
    ApiKey.INCREMENTAL_ALTER_CONFIGS: incremental_alter_configs.handle,
    ApiKey.ELECT_LEADERS: elect_leaders.handle,
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: alter_partition_reassignments.handle,
    ApiKey.LIST_PARTITION_REASSIGNMENTS: list_partition_reassignments.handle,
    ApiKey.DESCRIBE_LOG_DIRS: describe_log_dirs.handle,
    ApiKey.DESCRIBE_PRODUCERS: describe_producers.handle,
    ApiKey.DESCRIBE_TRANSACTIONS: describe_transactions.handle,
    ApiKey.LIST_TRANSACTIONS: list_transactions.handle,
    ApiKey.SPATE_CLEAN_PLAN: clean_plan.handle,
    ApiKey.SPATE_ARCHIVE_OFFSETS: archive_offsets.handle,
    ApiKey.CONSUMER_GROUP_HEARTBEAT: consumer_group_heartbeat.handle,
    ApiKey.CONSUMER_GROUP_DESCRIBE: consumer_group_describe.handle,
    ApiKey.DESCRIBE_ACLS: acls.handle_describe,
    ApiKey.CREATE_ACLS: acls.handle_create,
    ApiKey.DELETE_ACLS: acls.handle_delete,
}

_CLUSTER_HANDLERS: Mapping[ApiKey, Callable[[BrokerContext, Request], Any]] = {
    ApiKey.LEADER_AND_ISR: leader_and_isr.handle,
    ApiKey.UPDATE_METADATA: update_metadata.handle,
    ApiKey.STOP_REPLICA: stop_replica.handle,
    ApiKey.CONTROLLED_SHUTDOWN: controlled_shutdown.handle,
}

SERVED_APIS = frozenset(_HANDLERS)
CLUSTER_APIS = SERVED_APIS | frozenset(_CLUSTER_HANDLERS)


def served_apis(*, cluster: bool) -> frozenset[ApiKey]:
    return CLUSTER_APIS if cluster else SERVED_APIS


def bind_handlers(context: BrokerContext, *, cluster: bool = False) -> dict[ApiKey, Callable[[Request], Any]]:
    table = {**_HANDLERS, **_CLUSTER_HANDLERS} if cluster else _HANDLERS
    return {key: partial(handler, context) for key, handler in table.items()}
