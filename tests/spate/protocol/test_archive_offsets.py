"""ArchiveOffsets v0 (Spate API key 1001): pinned bytes both ways, and registration in the API tables."""

from __future__ import annotations

import struct

import pytest

from spate.protocol.api_keys import ApiKey
from spate.protocol.messages import REQUESTS, RESPONSES
from spate.protocol.messages.archive_offsets import ArchiveOffsetsRequest, ArchiveOffsetsResponse
from spate.protocol.versions import ADVERTISED_VERSIONS, VersionRange

Req, Resp = ArchiveOffsetsRequest, ArchiveOffsetsResponse


def i16(v: int) -> str:
    return struct.pack(">h", v).hex()


def i32(v: int) -> str:
    return struct.pack(">i", v).hex()


def i64(v: int) -> str:
    return struct.pack(">q", v).hex()


def s(text: str | None) -> str:
    return i16(-1) if text is None else i16(len(text.encode())) + text.encode().hex()


REQUEST = Req(topics=[Req.ArchiveOffsetsTopic("t", [Req.ArchiveOffsetsPartition(0, -1),
                                                     Req.ArchiveOffsetsPartition(2, 1200)])])
REQUEST_HEX = i32(1) + s("t") + i32(2) + i32(0) + i64(-1) + i32(2) + i64(1200)

RESPONSE = Resp(throttle_time_ms=0, topics=[Resp.ArchiveOffsetsTopicResult("t", [
    Resp.ArchiveOffsetsPartitionResult(partition_index=2, error_code=0, error_message=None, is_leader=True,
                                       log_start_offset=100, high_watermark=2000, last_stable_offset=1990,
                                       archived_offset=1200, archive_target_offset=1500, archive_path="s3://l/t"),
])])
RESPONSE_HEX = (i32(0) + i32(1) + s("t") + i32(1) + i32(2) + i16(0) + s(None) + "01" + i64(100) + i64(2000)
                + i64(1990) + i64(1200) + i64(1500) + s("s3://l/t"))

TABLE = [
    pytest.param(Req, REQUEST, REQUEST_HEX, id="request"),
    pytest.param(Resp, RESPONSE, RESPONSE_HEX, id="response"),
]


@pytest.mark.parametrize(("cls", "value", "hex_bytes"), TABLE)
def test_archive_offsets_v0_encodes_to_its_pinned_bytes(cls, value, hex_bytes) -> None:
    assert value.encode(0).hex() == hex_bytes


@pytest.mark.parametrize(("cls", "value", "hex_bytes"), TABLE)
def test_archive_offsets_v0_decodes_from_its_pinned_bytes(cls, value, hex_bytes) -> None:
    assert cls.decode(bytes.fromhex(hex_bytes), 0) == value


def test_archive_offsets_is_registered_and_advertised_as_version_zero_only() -> None:
    assert ApiKey.SPATE_ARCHIVE_OFFSETS == 1001
    assert REQUESTS[ApiKey.SPATE_ARCHIVE_OFFSETS] is Req.SCHEMA
    assert RESPONSES[ApiKey.SPATE_ARCHIVE_OFFSETS] is Resp.SCHEMA
    assert ADVERTISED_VERSIONS[ApiKey.SPATE_ARCHIVE_OFFSETS] == VersionRange(0, 0)
