"""Every API next to the versions Apache Kafka 3.9 serves, and Spate's advertised range.

Kafka 3.9 is the last release with ZooKeeper, the model for Spate's broker.
The table below is Kafka 3.9's ``validVersions`` (its message JSON files)
beside the range Spate advertises. A change that narrows a range fails here;
raising one means updating its row. Where Spate stays below Kafka the row
says so, and the set of such APIs may only shrink.

Each advertised client version is also checked on the wire against
kafka-python, whose messages are generated from Kafka's own JSON files:
a sample Spate encodes decodes there and re-encodes to the same bytes.
"""

from __future__ import annotations

import importlib
import pkgutil
import uuid
from typing import Any, NamedTuple

import kafka.protocol
import pytest
from kafka.protocol.api_message import ApiMessage

from spate.protocol.api_keys import ApiKey
from spate.protocol.connection import ServerConnection, decode_response
from spate.protocol.messages import REQUESTS, RESPONSES
from spate.protocol.messages.fetch import FetchResponse
from spate.protocol.versions import ADVERTISED_VERSIONS, VersionRange
from tests.spate.protocol.test_message_round_trips import SampleMaker


class Row(NamedTuple):
    kafka: VersionRange
    spate: VersionRange | None  # None: not served (yet)


def _r(low: int, high: int) -> VersionRange:
    return VersionRange(low, high)


KAFKA_39 = {
    ApiKey.PRODUCE: Row(_r(0, 11), _r(0, 11)),
    ApiKey.FETCH: Row(_r(0, 17), _r(0, 17)),
    ApiKey.LIST_OFFSETS: Row(_r(0, 9), _r(0, 9)),
    ApiKey.METADATA: Row(_r(0, 12), _r(0, 12)),
    ApiKey.LEADER_AND_ISR: Row(_r(0, 7), _r(0, 5)),
    ApiKey.STOP_REPLICA: Row(_r(0, 4), _r(0, 3)),
    ApiKey.UPDATE_METADATA: Row(_r(0, 8), _r(0, 7)),
    ApiKey.CONTROLLED_SHUTDOWN: Row(_r(0, 3), _r(0, 3)),
    ApiKey.OFFSET_COMMIT: Row(_r(0, 9), _r(0, 9)),
    ApiKey.OFFSET_FETCH: Row(_r(0, 9), _r(0, 9)),
    ApiKey.FIND_COORDINATOR: Row(_r(0, 6), _r(0, 6)),
    ApiKey.JOIN_GROUP: Row(_r(0, 9), _r(0, 9)),
    ApiKey.HEARTBEAT: Row(_r(0, 4), _r(0, 4)),
    ApiKey.LEAVE_GROUP: Row(_r(0, 5), _r(0, 5)),
    ApiKey.SYNC_GROUP: Row(_r(0, 5), _r(0, 5)),
    ApiKey.DESCRIBE_GROUPS: Row(_r(0, 5), _r(0, 5)),
    ApiKey.LIST_GROUPS: Row(_r(0, 5), _r(0, 5)),
    ApiKey.SASL_HANDSHAKE: Row(_r(0, 1), _r(0, 1)),
    ApiKey.API_VERSIONS: Row(_r(0, 4), _r(0, 4)),
    ApiKey.CREATE_TOPICS: Row(_r(0, 7), _r(0, 7)),
    ApiKey.DELETE_TOPICS: Row(_r(0, 6), _r(0, 6)),
    ApiKey.DELETE_RECORDS: Row(_r(0, 2), _r(0, 2)),
    ApiKey.INIT_PRODUCER_ID: Row(_r(0, 5), _r(0, 5)),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: Row(_r(0, 4), _r(0, 4)),
    ApiKey.ADD_PARTITIONS_TO_TXN: Row(_r(0, 5), _r(0, 5)),
    ApiKey.ADD_OFFSETS_TO_TXN: Row(_r(0, 4), _r(0, 4)),
    ApiKey.END_TXN: Row(_r(0, 4), _r(0, 4)),
    ApiKey.WRITE_TXN_MARKERS: Row(_r(0, 1), _r(0, 1)),
    ApiKey.TXN_OFFSET_COMMIT: Row(_r(0, 4), _r(0, 4)),
    ApiKey.DESCRIBE_ACLS: Row(_r(0, 3), _r(0, 3)),
    ApiKey.CREATE_ACLS: Row(_r(0, 3), _r(0, 3)),
    ApiKey.DELETE_ACLS: Row(_r(0, 3), _r(0, 3)),
    ApiKey.DESCRIBE_CONFIGS: Row(_r(0, 4), _r(0, 4)),
    ApiKey.ALTER_CONFIGS: Row(_r(0, 2), _r(0, 2)),
    ApiKey.SASL_AUTHENTICATE: Row(_r(0, 2), _r(0, 2)),
    ApiKey.CREATE_PARTITIONS: Row(_r(0, 3), _r(0, 3)),
    ApiKey.DELETE_GROUPS: Row(_r(0, 2), _r(0, 2)),
    ApiKey.ELECT_LEADERS: Row(_r(0, 2), _r(0, 2)),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: Row(_r(0, 1), _r(0, 1)),
    ApiKey.ALTER_PARTITION_REASSIGNMENTS: Row(_r(0, 0), _r(0, 0)),
    ApiKey.LIST_PARTITION_REASSIGNMENTS: Row(_r(0, 0), _r(0, 0)),
    ApiKey.OFFSET_DELETE: Row(_r(0, 0), _r(0, 0)),
    ApiKey.DESCRIBE_CLUSTER: Row(_r(0, 1), _r(0, 1)),
    ApiKey.DESCRIBE_LOG_DIRS: Row(_r(0, 4), _r(0, 4)),
    ApiKey.DESCRIBE_CLIENT_QUOTAS: Row(_r(0, 1), _r(0, 1)),
    ApiKey.ALTER_CLIENT_QUOTAS: Row(_r(0, 1), _r(0, 1)),
    ApiKey.DESCRIBE_PRODUCERS: Row(_r(0, 0), _r(0, 0)),
    ApiKey.DESCRIBE_TRANSACTIONS: Row(_r(0, 0), _r(0, 0)),
    ApiKey.LIST_TRANSACTIONS: Row(_r(0, 1), _r(0, 1)),
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: Row(_r(0, 0), _r(0, 0)),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: Row(_r(0, 0), _r(0, 0)),
    # KIP-848, the next-generation consumer group protocol (ConsumerGroupHeartbeat: see AHEAD_OF_KAFKA_39).
    ApiKey.CONSUMER_GROUP_HEARTBEAT: Row(_r(0, 0), _r(0, 1)),
    ApiKey.CONSUMER_GROUP_DESCRIBE: Row(_r(0, 0), _r(0, 0)),
}

# APIs still advertised below Kafka 3.9's newest version. This set may only shrink.
BEHIND_KAFKA_39 = frozenset(
    {
        # Inter-broker APIs: their newer versions carry KRaft-migration fields.
        ApiKey.LEADER_AND_ISR,
        ApiKey.STOP_REPLICA,
        ApiKey.UPDATE_METADATA,
    }
)


# Spate's own APIs, in a key range Kafka does not use: clients that do not know them ignore them.
SPATE_APIS = frozenset({ApiKey.SPATE_CLEAN_PLAN, ApiKey.SPATE_ARCHIVE_OFFSETS})
KAFKA_APIS_ADVERTISED = [key for key in ADVERTISED_VERSIONS if key not in SPATE_APIS]

# APIs advertised beyond Kafka 3.9, with the Kafka release whose range they follow.
AHEAD_OF_KAFKA_39 = {
    # Kafka 4.0's v1 (topic regex, member ids chosen by the client): librdkafka 2.16 uses the
    # consumer protocol only with it.
    ApiKey.CONSUMER_GROUP_HEARTBEAT: ("4.0", _r(0, 1)),
}


def test_every_advertised_api_has_a_row() -> None:
    assert set(KAFKA_APIS_ADVERTISED) <= set(KAFKA_39)


def test_spates_own_apis_use_keys_kafka_leaves_free() -> None:
    assert all(key >= 1000 for key in SPATE_APIS)


@pytest.mark.parametrize("key", list(KAFKA_39), ids=lambda key: key.name)
def test_spate_advertises_the_range_its_row_names(key: ApiKey) -> None:
    assert ADVERTISED_VERSIONS.get(key) == KAFKA_39[key].spate


@pytest.mark.parametrize("key", KAFKA_APIS_ADVERTISED, ids=lambda key: key.name)
def test_no_range_goes_beyond_what_kafka_39_serves(key: ApiKey) -> None:
    kafka, spate = KAFKA_39[key]
    if key in AHEAD_OF_KAFKA_39:
        kafka = AHEAD_OF_KAFKA_39[key][1]
    assert spate is not None and kafka.min <= spate.min and spate.max <= kafka.max


@pytest.mark.parametrize("key", list(KAFKA_39), ids=lambda key: key.name)
def test_every_range_starts_where_kafka_39s_does(key: ApiKey) -> None:
    """Old clients (legacy message formats, groupless commits) find every version Kafka 3.9 still serves."""
    kafka, spate = KAFKA_39[key]
    assert spate is not None and spate.min == kafka.min


def test_only_the_listed_apis_stay_below_kafka_39() -> None:
    behind = {key for key, row in KAFKA_39.items() if row.spate is not None and row.spate.max < row.kafka.max}
    assert behind == BEHIND_KAFKA_39


# -- the same bytes as Kafka's own message definitions ------------------------------------------


def _kafka_python_messages() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for module in pkgutil.walk_packages(kafka.protocol.__path__, "kafka.protocol."):
        try:
            loaded = importlib.import_module(module.name)
        except ImportError:
            continue
        for name, value in vars(loaded).items():
            if isinstance(value, type) and issubclass(value, ApiMessage) and value is not ApiMessage:
                found.setdefault(name, value)
    return found


# kafka-python reads any ApiVersions reply with an error as v0 (Kafka's refusal format), so random samples do not fit.
KAFKA_PYTHON = {name: cls for name, cls in _kafka_python_messages().items() if name != "ApiVersionsResponse"}
WIRE_CASES = [
    pytest.param(schema, version, id=f"{schema.name}-v{version}")
    for key, span in ADVERTISED_VERSIONS.items()
    for schema in (REQUESTS[key], RESPONSES[key])
    for version in range(span.min, span.max + 1)
    if schema.name in KAFKA_PYTHON and version in range(KAFKA_PYTHON[schema.name].min_version,
                                                        KAFKA_PYTHON[schema.name].max_version + 1)
]


@pytest.mark.parametrize(("schema", "version"), WIRE_CASES)
def test_kafka_python_reads_and_rewrites_the_bytes_spate_writes(schema: Any, version: int) -> None:
    kp_cls = KAFKA_PYTHON[schema.name]
    for seed in range(3):
        encoded = schema.encode(SampleMaker(schema, version, seed).message(), version)
        decoded = kp_cls.decode(encoded, version=version)
        decoded._header = None  # decoded without a header; encode() looks for one
        assert decoded.encode(version=version) == encoded, f"seed {seed}"


@pytest.mark.parametrize("version", [12, 13, 16, 17])
def test_flexible_fetch_responses_leave_large_record_sets_as_their_own_part(version: int) -> None:
    """Compact record lengths in flexible versions must not stop sendfile from serving the records."""
    records = bytes(range(256)) * 100
    R = FetchResponse
    body = R(responses=[R.FetchableTopicResponse(topic_id=uuid.uuid4(), partitions=[
        R.PartitionData(partition_index=0, high_watermark=10, records=records)])])
    contiguous = ServerConnection().encode_response(3, ApiKey.FETCH, version, body)
    parts = ServerConnection().encode_response_parts(3, ApiKey.FETCH, version, body)
    assert any(part is records for part in parts)
    assert b"".join(parts) == contiguous
    decoded = decode_response(ApiKey.FETCH, version, contiguous[4:]).body
    assert bytes(decoded.responses[0].partitions[0].records) == records
