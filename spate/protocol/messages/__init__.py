"""Every declared request and response, indexed by API key.

One module per API family; the server's handlers use the same file names.
Importing this package compiles all declarations and checks that each
advertised version range is declared for both directions.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping

from spate.protocol.api_keys import ApiKey
from spate.protocol.messages import (
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
from spate.protocol.schema import MessageSchema, SchemaError
from spate.protocol.versions import ADVERTISED_VERSIONS

_PAIRS: list[tuple[Any, Any]] = [
    (produce.ProduceRequest, produce.ProduceResponse),
    (fetch.FetchRequest, fetch.FetchResponse),
    (list_offsets.ListOffsetsRequest, list_offsets.ListOffsetsResponse),
    (metadata.MetadataRequest, metadata.MetadataResponse),
    (leader_and_isr.LeaderAndIsrRequest, leader_and_isr.LeaderAndIsrResponse),
    (stop_replica.StopReplicaRequest, stop_replica.StopReplicaResponse),
    (update_metadata.UpdateMetadataRequest, update_metadata.UpdateMetadataResponse),
    (controlled_shutdown.ControlledShutdownRequest, controlled_shutdown.ControlledShutdownResponse),
    (offset_commit.OffsetCommitRequest, offset_commit.OffsetCommitResponse),
    (offset_fetch.OffsetFetchRequest, offset_fetch.OffsetFetchResponse),
    (find_coordinator.FindCoordinatorRequest, find_coordinator.FindCoordinatorResponse),
    (join_group.JoinGroupRequest, join_group.JoinGroupResponse),
    (heartbeat.HeartbeatRequest, heartbeat.HeartbeatResponse),
    (leave_group.LeaveGroupRequest, leave_group.LeaveGroupResponse),
    (sync_group.SyncGroupRequest, sync_group.SyncGroupResponse),
    (describe_groups.DescribeGroupsRequest, describe_groups.DescribeGroupsResponse),
    (list_groups.ListGroupsRequest, list_groups.ListGroupsResponse),
    (sasl_handshake.SaslHandshakeRequest, sasl_handshake.SaslHandshakeResponse),
    (api_versions.ApiVersionsRequest, api_versions.ApiVersionsResponse),
    (create_topics.CreateTopicsRequest, create_topics.CreateTopicsResponse),
    (delete_topics.DeleteTopicsRequest, delete_topics.DeleteTopicsResponse),
    (delete_records.DeleteRecordsRequest, delete_records.DeleteRecordsResponse),
    (init_producer_id.InitProducerIdRequest, init_producer_id.InitProducerIdResponse),
    (offset_for_leader_epoch.OffsetForLeaderEpochRequest, offset_for_leader_epoch.OffsetForLeaderEpochResponse),
    (add_partitions_to_txn.AddPartitionsToTxnRequest, add_partitions_to_txn.AddPartitionsToTxnResponse),
    (add_offsets_to_txn.AddOffsetsToTxnRequest, add_offsets_to_txn.AddOffsetsToTxnResponse),
    (end_txn.EndTxnRequest, end_txn.EndTxnResponse),
    (write_txn_markers.WriteTxnMarkersRequest, write_txn_markers.WriteTxnMarkersResponse),
    (txn_offset_commit.TxnOffsetCommitRequest, txn_offset_commit.TxnOffsetCommitResponse),
    (describe_configs.DescribeConfigsRequest, describe_configs.DescribeConfigsResponse),
    (alter_configs.AlterConfigsRequest, alter_configs.AlterConfigsResponse),
    (describe_log_dirs.DescribeLogDirsRequest, describe_log_dirs.DescribeLogDirsResponse),
    (sasl_authenticate.SaslAuthenticateRequest, sasl_authenticate.SaslAuthenticateResponse),
    (create_partitions.CreatePartitionsRequest, create_partitions.CreatePartitionsResponse),
    (delete_groups.DeleteGroupsRequest, delete_groups.DeleteGroupsResponse),
    (elect_leaders.ElectLeadersRequest, elect_leaders.ElectLeadersResponse),
    (
        incremental_alter_configs.IncrementalAlterConfigsRequest,
        incremental_alter_configs.IncrementalAlterConfigsResponse,
    ),
    (
        alter_partition_reassignments.AlterPartitionReassignmentsRequest,
        alter_partition_reassignments.AlterPartitionReassignmentsResponse,
    ),
    (
        list_partition_reassignments.ListPartitionReassignmentsRequest,
        list_partition_reassignments.ListPartitionReassignmentsResponse,
    ),
    (offset_delete.OffsetDeleteRequest, offset_delete.OffsetDeleteResponse),
    (describe_cluster.DescribeClusterRequest, describe_cluster.DescribeClusterResponse),
    (
        describe_user_scram_credentials.DescribeUserScramCredentialsRequest,
        describe_user_scram_credentials.DescribeUserScramCredentialsResponse,
    ),
    (
        alter_user_scram_credentials.AlterUserScramCredentialsRequest,
        alter_user_scram_credentials.AlterUserScramCredentialsResponse,
    ),
    (describe_producers.DescribeProducersRequest, describe_producers.DescribeProducersResponse),
    (
        describe_transactions.DescribeTransactionsRequest,
        describe_transactions.DescribeTransactionsResponse,
    ),
    (list_transactions.ListTransactionsRequest, list_transactions.ListTransactionsResponse),
    (clean_plan.CleanPlanRequest, clean_plan.CleanPlanResponse),
    (archive_offsets.ArchiveOffsetsRequest, archive_offsets.ArchiveOffsetsResponse),
    (
        consumer_group_heartbeat.ConsumerGroupHeartbeatRequest,
        consumer_group_heartbeat.ConsumerGroupHeartbeatResponse,
    ),
    (
        consumer_group_describe.ConsumerGroupDescribeRequest,
        consumer_group_describe.ConsumerGroupDescribeResponse,
    ),
    (acls.DescribeAclsRequest, acls.DescribeAclsResponse),
    (acls.CreateAclsRequest, acls.CreateAclsResponse),
    (acls.DeleteAclsRequest, acls.DeleteAclsResponse),
    (describe_client_quotas.DescribeClientQuotasRequest, describe_client_quotas.DescribeClientQuotasResponse),
    (alter_client_quotas.AlterClientQuotasRequest, alter_client_quotas.AlterClientQuotasResponse),
]


def _index(pairs: list[tuple[Any, Any]]) -> tuple[dict[ApiKey, MessageSchema], dict[ApiKey, MessageSchema]]:
    requests: dict[ApiKey, MessageSchema] = {}
    responses: dict[ApiKey, MessageSchema] = {}
    for request_cls, response_cls in pairs:
        request, response = request_cls.SCHEMA, response_cls.SCHEMA
        if request.api_key != response.api_key or request.versions != response.versions:
            raise SchemaError(f"{request.name} and {response.name} disagree on api key or versions")
        if not request.is_request or response.is_request or request.api_key in requests:
            raise SchemaError(f"{request.name}/{response.name} registered twice or the wrong way round")
        requests[ApiKey(request.api_key)] = request
        responses[ApiKey(response.api_key)] = response
    for key, advertised in ADVERTISED_VERSIONS.items():
        declared = requests.get(key)
        if declared is None or advertised.min < declared.versions.min or advertised.max > declared.versions.max:
            raise SchemaError(f"advertised {key.name} {advertised} is not fully declared")
    return requests, responses


_requests, _responses = _index(_PAIRS)
REQUESTS: Mapping[ApiKey, MessageSchema] = MappingProxyType(_requests)
RESPONSES: Mapping[ApiKey, MessageSchema] = MappingProxyType(_responses)


def request_schema(api_key: int) -> MessageSchema | None:
    """The request declaration for ``api_key``, or None when Spate declares none."""
    return _requests.get(api_key)  # type: ignore[call-overload]


def response_schema(api_key: int) -> MessageSchema | None:
    return _responses.get(api_key)  # type: ignore[call-overload]
