"""The API versions this broker advertises in its ApiVersions response.

Every range is non-flexible. Low ends stay low on purpose: librdkafka before
2.11.1 checks that specific old versions are inside a range and otherwise falls
back to the pre-0.11 message format, and kafka-python infers the broker's age
from the Metadata range. SaslHandshake and SaslAuthenticate are absent until
the server implements authentication.
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
        ApiKey.OFFSET_COMMIT: VersionRange(2, 7),
        ApiKey.OFFSET_FETCH: VersionRange(1, 5),
        ApiKey.FIND_COORDINATOR: VersionRange(0, 2),
        ApiKey.JOIN_GROUP: VersionRange(0, 5),
        ApiKey.HEARTBEAT: VersionRange(0, 3),
        ApiKey.LEAVE_GROUP: VersionRange(0, 3),
        ApiKey.SYNC_GROUP: VersionRange(0, 3),
        ApiKey.DESCRIBE_GROUPS: VersionRange(0, 4),
        ApiKey.LIST_GROUPS: VersionRange(0, 2),
        ApiKey.API_VERSIONS: VersionRange(0, 2),
        ApiKey.CREATE_TOPICS: VersionRange(0, 4),
        ApiKey.DELETE_TOPICS: VersionRange(0, 3),
        ApiKey.DELETE_RECORDS: VersionRange(0, 1),
        ApiKey.INIT_PRODUCER_ID: VersionRange(0, 1),
        ApiKey.OFFSET_FOR_LEADER_EPOCH: VersionRange(0, 3),
        ApiKey.ADD_PARTITIONS_TO_TXN: VersionRange(0, 2),
        ApiKey.ADD_OFFSETS_TO_TXN: VersionRange(0, 2),
        ApiKey.END_TXN: VersionRange(0, 2),
        ApiKey.TXN_OFFSET_COMMIT: VersionRange(0, 2),
        ApiKey.DESCRIBE_CONFIGS: VersionRange(0, 2),
        ApiKey.ALTER_CONFIGS: VersionRange(0, 1),
        ApiKey.CREATE_PARTITIONS: VersionRange(0, 1),
        ApiKey.DELETE_GROUPS: VersionRange(0, 1),
        ApiKey.OFFSET_DELETE: VersionRange(0, 0),
    }
)
