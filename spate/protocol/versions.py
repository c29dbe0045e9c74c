"""The API versions this broker advertises in its ApiVersions response.

The broker advertises only the APIs it has handlers for (it filters this
table), so a range here may precede the code that serves it.

Each client API is advertised up to the version Kafka 3.9 (the last release
with ZooKeeper) serves, flexible versions included, so that current clients
take their newest paths (batched OffsetFetch and FindCoordinator, KIP-447
group metadata in TxnOffsetCommit, topic ids in Fetch and Metadata, ...).
``tests/spate/protocol/test_kafka_39_versions.py`` holds Kafka 3.9's table
and fails when a range falls behind it.

Every range starts where Kafka 3.9's does, so clients of the legacy message
formats (Produce v0-2, Fetch v0-3) work too. Low ends matter beyond them:
librdkafka before 2.11.1 checks that specific old versions are inside a
range and otherwise falls back to the pre-0.11 message format, and
kafka-python infers the broker's age from the Metadata range. A reply is always encoded at its request's version, so tagged fields
reach only a client that chose a flexible version itself, and Spate writes a
tagged field only when its value differs from the default (the leader hints
of Produce v10 and Fetch v12+ are never set, so those replies carry empty
tag sections): librdkafka before 2.2.0, which skipped non-empty tag sections
of flexible Metadata replies by the wrong length, reads these replies
correctly. SaslHandshake 0-1 and SaslAuthenticate 0-2 serve SASL listeners;
other listeners answer them ILLEGAL_SASL_STATE. DescribeAcls, CreateAcls and
DeleteAcls 0-3 are flexible from 2; librdkafka sends them at v0-1.

ConsumerGroupHeartbeat goes one version past Kafka 3.9, to Kafka 4.0's v1:
librdkafka 2.16 uses the KIP-848 consumer protocol only with it.

The cluster APIs keep their ranges (Kafka 3.9's additions there belong to
the KRaft migration):

    LeaderAndIsr 0-5 (4-5 flexible)      StopReplica 0-3 (2-3 flexible)
    UpdateMetadata 0-7 (6-7 flexible)    ControlledShutdown 0-3 (3 flexible)
    WriteTxnMarkers 0-1 (1 flexible)
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
        ApiKey.PRODUCE: VersionRange(0, 11),
        ApiKey.FETCH: VersionRange(0, 17),
        ApiKey.LIST_OFFSETS: VersionRange(0, 9),
        ApiKey.METADATA: VersionRange(0, 12),
        ApiKey.LEADER_AND_ISR: VersionRange(0, 5),
        ApiKey.STOP_REPLICA: VersionRange(0, 3),
        ApiKey.UPDATE_METADATA: VersionRange(0, 7),
        ApiKey.CONTROLLED_SHUTDOWN: VersionRange(0, 3),
        ApiKey.OFFSET_COMMIT: VersionRange(0, 9),
        ApiKey.OFFSET_FETCH: VersionRange(0, 9),
        ApiKey.FIND_COORDINATOR: VersionRange(0, 6),
        ApiKey.JOIN_GROUP: VersionRange(0, 9),
        ApiKey.HEARTBEAT: VersionRange(0, 4),
        ApiKey.LEAVE_GROUP: VersionRange(0, 5),
        ApiKey.SYNC_GROUP: VersionRange(0, 5),
        ApiKey.DESCRIBE_GROUPS: VersionRange(0, 5),
        ApiKey.LIST_GROUPS: VersionRange(0, 5),
        ApiKey.SASL_HANDSHAKE: VersionRange(0, 1),
        ApiKey.API_VERSIONS: VersionRange(0, 4),
        ApiKey.CREATE_TOPICS: VersionRange(0, 7),
        ApiKey.DELETE_TOPICS: VersionRange(0, 6),
        ApiKey.DELETE_RECORDS: VersionRange(0, 2),
        ApiKey.INIT_PRODUCER_ID: VersionRange(0, 5),
        ApiKey.OFFSET_FOR_LEADER_EPOCH: VersionRange(0, 4),
        ApiKey.ADD_PARTITIONS_TO_TXN: VersionRange(0, 5),
        ApiKey.ADD_OFFSETS_TO_TXN: VersionRange(0, 4),
        ApiKey.END_TXN: VersionRange(0, 4),
        ApiKey.WRITE_TXN_MARKERS: VersionRange(0, 1),
        ApiKey.TXN_OFFSET_COMMIT: VersionRange(0, 4),
        ApiKey.DESCRIBE_CONFIGS: VersionRange(0, 4),
        ApiKey.SASL_AUTHENTICATE: VersionRange(0, 2),
        ApiKey.ALTER_CONFIGS: VersionRange(0, 2),
        ApiKey.CREATE_PARTITIONS: VersionRange(0, 3),
        ApiKey.DELETE_GROUPS: VersionRange(0, 2),
        ApiKey.ELECT_LEADERS: VersionRange(0, 2),
        ApiKey.INCREMENTAL_ALTER_CONFIGS: VersionRange(0, 1),
        ApiKey.ALTER_PARTITION_REASSIGNMENTS: VersionRange(0, 0),
        ApiKey.LIST_PARTITION_REASSIGNMENTS: VersionRange(0, 0),
        ApiKey.OFFSET_DELETE: VersionRange(0, 0),
        ApiKey.DESCRIBE_CLUSTER: VersionRange(0, 1),
        ApiKey.DESCRIBE_LOG_DIRS: VersionRange(0, 4),
        ApiKey.DESCRIBE_PRODUCERS: VersionRange(0, 0),
        ApiKey.DESCRIBE_TRANSACTIONS: VersionRange(0, 0),
        ApiKey.LIST_TRANSACTIONS: VersionRange(0, 1),
        ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: VersionRange(0, 0),
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS: VersionRange(0, 0),
        ApiKey.SPATE_CLEAN_PLAN: VersionRange(0, 0),
        ApiKey.SPATE_ARCHIVE_OFFSETS: VersionRange(0, 0),
        ApiKey.CONSUMER_GROUP_HEARTBEAT: VersionRange(0, 1),
        ApiKey.CONSUMER_GROUP_DESCRIBE: VersionRange(0, 0),
        ApiKey.DESCRIBE_ACLS: VersionRange(0, 3),
        ApiKey.CREATE_ACLS: VersionRange(0, 3),
        ApiKey.DELETE_ACLS: VersionRange(0, 3),
        ApiKey.DESCRIBE_CLIENT_QUOTAS: VersionRange(0, 1),
        ApiKey.ALTER_CLIENT_QUOTAS: VersionRange(0, 1),
    }
)
