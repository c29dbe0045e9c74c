"""Every declared message at every declared version survives encode -> decode.

Sample values are generated from the declarations themselves (seeded, so a
failure names its seed), and a few messages are pinned to hand-built bytes in
both directions.
"""

from __future__ import annotations

import random
import struct
import uuid
from typing import Any

import pytest

from spate.protocol import types as t
from spate.protocol.api_keys import ApiKey
from spate.protocol.messages import REQUESTS, RESPONSES
from spate.protocol.messages.api_versions import ApiVersionsRequest
from spate.protocol.messages.fetch import FetchRequest
from spate.protocol.messages.find_coordinator import FindCoordinatorResponse
from spate.protocol.messages.metadata import MetadataRequest
from spate.protocol.messages.produce import ProduceResponse
from spate.protocol.schema import Array, Field, MessageSchema, Struct
from spate.protocol.versions import ADVERTISED_VERSIONS

SEEDS = range(4)
_INT_RANGES = {
    t.INT8: 8,
    t.INT16: 16,
    t.INT32: 32,
    t.INT64: 64,
}


def _span(declared: tuple[int, int | None] | None, parent: tuple[int, int]) -> tuple[int, int]:
    if declared is None:
        return parent
    return declared[0], parent[1] if declared[1] is None else declared[1]


class SampleMaker:
    """Random values for the fields a version carries; other fields keep their defaults."""

    def __init__(self, schema: MessageSchema, version: int, seed: int) -> None:
        self.schema = schema
        self.version = version
        self.flexible = schema.is_flexible(version)
        self.rng = random.Random(seed)

    def message(self) -> Any:
        return self.struct(self.schema.root, (self.schema.versions.min, self.schema.versions.max))

    def struct(self, struct: Struct, span: tuple[int, int]) -> Any:
        values = {}
        for f in struct.fields:
            versions = _span(f.versions, span)
            if not versions[0] <= self.version <= versions[1]:
                continue
            values[f.name] = self.field(f, versions)
        return self.schema.classes[struct.name](**values)

    def field(self, f: Field, versions: tuple[int, int]) -> Any:
        nullable = f.nullable is not False and (
            f.nullable is True or _span(f.nullable, versions)[0] <= self.version <= _span(f.nullable, versions)[1]
        )
        if nullable and self.rng.random() < 0.25:
            return None
        return self.value(f.type, versions)

    def value(self, kind: Any, versions: tuple[int, int]) -> Any:
        rng = self.rng
        if isinstance(kind, Struct):
            return self.struct(kind, versions)
        if isinstance(kind, Array):
            return [self.value(kind.of, versions) for _ in range(rng.randint(0, 3))]
        if kind in _INT_RANGES:
            low, high = -(2 ** (_INT_RANGES[kind] - 1)), 2 ** (_INT_RANGES[kind] - 1) - 1
            return rng.choice([0, -1, 1, low, high, rng.randint(low, high)])
        if kind is t.BOOLEAN:
            return rng.random() < 0.5
        if kind is t.FLOAT64:
            return rng.choice([0.0, -1.5, 1048576.0, 1e300, rng.uniform(-1e6, 1e6)])
        if kind is t.STRING:
            return "".join(rng.choice("abcxyz-._é€") for _ in range(rng.randint(0, 12)))
        if kind in (t.BYTES, t.RECORDS):
            return rng.randbytes(rng.randint(0, 40))
        if kind is t.UUID:
            return rng.choice([t.ZERO_UUID, uuid.UUID(int=rng.getrandbits(128))])
        raise AssertionError(f"no sample for {kind!r}")


CASES = [
    pytest.param(schema, version, id=f"{schema.name}-v{version}")
    for table in (REQUESTS, RESPONSES)
    for schema in table.values()
    for version in range(schema.versions.min, schema.versions.max + 1)
]


@pytest.mark.parametrize(("schema", "version"), CASES)
def test_generated_values_round_trip(schema: MessageSchema, version: int) -> None:
    for seed in SEEDS:
        value = SampleMaker(schema, version, seed).message()
        encoded = schema.encode(value, version)
        decoded = schema.decode(encoded, version)
        assert decoded == value, f"seed {seed}"
        assert schema.encode(decoded, version) == encoded, f"seed {seed}"


@pytest.mark.parametrize(("schema", "version"), CASES)
def test_default_constructed_messages_round_trip(schema: MessageSchema, version: int) -> None:
    value = schema.classes[schema.name]()
    assert schema.decode(schema.encode(value, version), version) == value


def test_every_advertised_version_is_declared_in_both_directions() -> None:
    for key, span in ADVERTISED_VERSIONS.items():
        for table in (REQUESTS, RESPONSES):
            declared = table[key].versions
            assert declared.min <= span.min and span.max <= declared.max, key.name


# Advertised with their flexible versions; spate.protocol.versions says why that is safe.
CLUSTER_APIS = frozenset(
    {
        ApiKey.LEADER_AND_ISR,
        ApiKey.STOP_REPLICA,
        ApiKey.UPDATE_METADATA,
        ApiKey.CONTROLLED_SHUTDOWN,
        ApiKey.WRITE_TXN_MARKERS,
        ApiKey.ELECT_LEADERS,
        ApiKey.INCREMENTAL_ALTER_CONFIGS,
        ApiKey.ALTER_PARTITION_REASSIGNMENTS,
        ApiKey.LIST_PARTITION_REASSIGNMENTS,
        ApiKey.DESCRIBE_CLUSTER,
    }
)


def i16(v: int) -> str:
    return struct.pack(">h", v).hex()


def i32(v: int) -> str:
    return struct.pack(">i", v).hex()


def i64(v: int) -> str:
    return struct.pack(">q", v).hex()


def s(text: str) -> str:
    return i16(len(text.encode())) + text.encode().hex()


BYTE_TABLE = [
    pytest.param(MetadataRequest, 0, MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="a")]),
                 i32(1) + s("a"), id="metadata-v0-one-topic"),
    pytest.param(MetadataRequest, 1, MetadataRequest(topics=None), i32(-1), id="metadata-v1-all-topics"),
    pytest.param(MetadataRequest, 4, MetadataRequest(topics=[], allow_auto_topic_creation=False),
                 i32(0) + "00", id="metadata-v4-no-topics-no-auto-create"),
    pytest.param(
        ProduceResponse, 7,
        ProduceResponse(
            responses=[ProduceResponse.TopicProduceResponse("t", [
                ProduceResponse.PartitionProduceResponse(index=2, error_code=6, base_offset=42, log_start_offset=3),
            ])],
            throttle_time_ms=5,
        ),
        i32(1) + s("t") + i32(1) + i32(2) + i16(6) + i64(42) + i64(-1) + i64(3) + i32(5),
        id="produce-response-v7",
    ),
    pytest.param(
        FetchRequest, 4,
        FetchRequest(max_wait_ms=500, min_bytes=1, max_bytes=1024, isolation_level=1,
                     topics=[FetchRequest.FetchTopic(topic="t", partitions=[
                         FetchRequest.FetchPartition(partition=0, fetch_offset=10, partition_max_bytes=99),
                     ])]),
        i32(-1) + i32(500) + i32(1) + i32(1024) + "01" + i32(1) + s("t") + i32(1) + i32(0) + i64(10) + i32(99),
        id="fetch-request-v4",
    ),
    pytest.param(FindCoordinatorResponse, 0, FindCoordinatorResponse(error_code=0, node_id=1, host="h", port=9092),
                 i16(0) + i32(1) + s("h") + i32(9092), id="find-coordinator-response-v0"),
    pytest.param(ApiVersionsRequest, 3, ApiVersionsRequest(client_software_name="n", client_software_version="1"),
                 "026e" "0231" "00", id="api-versions-request-v3-flexible"),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), BYTE_TABLE)
def test_message_encodes_to_its_documented_bytes(cls: Any, version: int, value: Any, hex_bytes: str) -> None:
    assert value.encode(version).hex() == hex_bytes


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), BYTE_TABLE)
def test_message_decodes_from_its_documented_bytes(cls: Any, version: int, value: Any, hex_bytes: str) -> None:
    assert cls.decode(bytes.fromhex(hex_bytes), version) == value
