"""The API versions this broker advertises in its ApiVersions response.

The broker advertises only the APIs it has handlers for (it filters this
table), so a range here may precede the code that serves it.

The client APIs (Produce .. OffsetDelete, ApiVersions included) stay
non-flexible: a client picks the highest version both sides know, and
librdkafka before 2.2.0 skips tagged fields in flexible Metadata replies by the
wrong length, so these ranges end below each API's first flexible version.
Low ends stay low on purpose: librdkafka before 2.11.1 checks that specific
old versions are inside a range and otherwise falls back to the pre-0.11
message format, and kafka-python infers the broker's age from the Metadata
range. SaslHandshake 0-1 and SaslAuthenticate 0-2 (2 flexible: only clients
that read tagged fields choose it) serve SASL listeners; other listeners
answer them ILLEGAL_SASL_STATE.

The cluster APIs are advertised in full, flexible versions included:

    LeaderAndIsr 0-5 (4-5 flexible)      StopReplica 0-3 (2-3 flexible)
    UpdateMetadata 0-7 (6-7 flexible)    ControlledShutdown 0-3 (3 flexible)
    WriteTxnMarkers 0-1 (1 flexible)     ElectLeaders 0-2 (2 flexible)
    IncrementalAlterConfigs 0-1 (1 flexible)
    AlterPartitionReassignments 0, ListPartitionReassignments 0,
    DescribeCluster 0-1, DescribeUserScramCredentials 0 and
    AlterUserScramCredentials 0 (every version flexible)

That is safe because a reply is always encoded at its request's version, so
tagged fields reach only a client that chose a flexible version itself, and
no client with the tag-skipping fault chooses one here: LeaderAndIsr,
StopReplica, UpdateMetadata, ControlledShutdown and WriteTxnMarkers are sent
by brokers and the controller only; librdkafka sends IncrementalAlterConfigs
from 2.2.0 and ElectLeaders from 2.6.0, and none of the other APIs; the last
five have no non-flexible version in Kafka, so every client of them reads
tagged fields.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, NamedTuple

from spate.protocol.api_keys import ApiKey


class VersionRange(NamedTuple):
    """An inclusive ``min..max`` range of API versions."""

    min: int
    max: int

    def __contains__(self, version: object) -> bool:  # type: ignore[override]
        return isinstance(version, int) and self.min <= version <= self.max


ADVERTISED_VERSIONS: Mapping[ApiKey, VersionRange] = MappingProxyType(
    {
        ApiKey.PRODUCE: VersionRange(3, 7),
        ApiKey.FETCH: VersionRange(4, 11),
        ApiKey.LIST_OFFSETS: VersionRange(1, 5),
        ApiKey.METADATA: VersionRange(0, 8),
        ApiKey.LEADER_AND_ISR: VersionRange(0, 5),
        ApiKey.STOP_REPLICA: VersionRange(0, 3),
        ApiKey.UPDATE_METADATA: VersionRange(0, 7),
        ApiKey.CONTROLLED_SHUTDOWN: VersionRange(0, 3),
        ApiKey.OFFSET_COMMIT: VersionRange(2, 7),
        ApiKey.OFFSET_FETCH: VersionRange(1, 5),
        ApiKey.FIND_COORDINATOR: VersionRange(0, 2),
        ApiKey.JOIN_GROUP: VersionRange(0, 5),
        ApiKey.HEARTBEAT: VersionRange(0, 3),
        ApiKey.LEAVE_GROUP: VersionRange(0, 3),
        ApiKey.SYNC_GROUP: VersionRange(0, 3),
        ApiKey.DESCRIBE_GROUPS: VersionRange(0, 4),
        ApiKey.LIST_GROUPS: VersionRange(0, 2),
        ApiKey.SASL_HANDSHAKE: VersionRange(0, 1),
        ApiKey.API_VERSIONS: VersionRange(0, 2),
        ApiKey.CREATE_TOPICS: VersionRange(0, 4),
        ApiKey.DELETE_TOPICS: VersionRange(0, 3),
        ApiKey.DELETE_RECORDS: VersionRange(0, 1),
        ApiKey.INIT_PRODUCER_ID: VersionRange(0, 1),
        ApiKey.OFFSET_FOR_LEADER_EPOCH: VersionRange(0, 3),
        ApiKey.ADD_PARTITIONS_TO_TXN: VersionRange(0, 2),
        ApiKey.ADD_OFFSETS_TO_TXN: VersionRange(0, 2),
        ApiKey.END_TXN: VersionRange(0, 2),
        ApiKey.WRITE_TXN_MARKERS: VersionRange(0, 1),
        ApiKey.TXN_OFFSET_COMMIT: VersionRange(0, 2),
        ApiKey.DESCRIBE_CONFIGS: VersionRange(0, 2),
        ApiKey.SASL_AUTHENTICATE: VersionRange(0, 2),
        ApiKey.ALTER_CONFIGS: VersionRange(0, 1),
        ApiKey.CREATE_PARTITIONS: VersionRange(0, 1),
        ApiKey.DELETE_GROUPS: VersionRange(0, 1),
        ApiKey.ELECT_LEADERS: VersionRange(0, 2),
        ApiKey.INCREMENTAL_ALTER_CONFIGS: VersionRange(0, 1),
        ApiKey.ALTER_PARTITION_REASSIGNMENTS: VersionRange(0, 0),
        ApiKey.LIST_PARTITION_REASSIGNMENTS: VersionRange(0, 0),
        ApiKey.OFFSET_DELETE: VersionRange(0, 0),
        ApiKey.DESCRIBE_CLUSTER: VersionRange(0, 1),
        ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: VersionRange(0, 0),
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS: VersionRange(0, 0),
        ApiKey.DESCRIBE_CLIENT_QUOTAS: VersionRange(0, 1),
        ApiKey.ALTER_CLIENT_QUOTAS: VersionRange(0, 1),
    }
)
