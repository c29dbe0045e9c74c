"""``__consumer_offsets`` keys and values: Kafka's layouts, byte for byte, both ways."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from broker_core.coordinator.group.offsets import NO_EXPIRE_TIMESTAMP, CommittedOffset
from broker_core.coordinator.group.offsets_log import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetsRecordError,
    decode_group_metadata_value,
    decode_key,
    decode_offset_commit_value,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def s(text: str | None) -> bytes:
    return i16(-1) if text is None else i16(len(text.encode())) + text.encode()


def b(data: bytes) -> bytes:
    return i32(len(data)) + data


def uvarint(n: int) -> bytes:
    return bytes([n]) if n < 0x80 else bytes([(n & 0x7F) | 0x80, n >> 7])


def cs(text: str) -> bytes:
    return uvarint(len(text.encode()) + 1) + text.encode()


def test_offset_commit_key_is_version_1_group_topic_partition() -> None:
    assert offset_commit_key("g", "orders", 3) == i16(1) + s("g") + s("orders") + i32(3)


def test_group_metadata_key_is_version_2_group() -> None:
    assert group_metadata_key("g") == i16(2) + s("g")


@pytest.mark.parametrize("version", [0, 1])
def test_both_offset_key_versions_decode(version: int) -> None:
    assert decode_key(i16(version) + s("g") + s("t") + i32(7)) == OffsetCommitKey("g", "t", 7)


def test_group_key_decodes() -> None:
    assert decode_key(i16(2) + s("g")) == GroupMetadataKey("g")


def test_offset_value_is_written_as_version_3_with_the_leader_epoch() -> None:
    committed = CommittedOffset(offset=42, leader_epoch=5, metadata="m", commit_timestamp_ms=1000)
    assert offset_commit_value(committed) == i16(3) + i64(42) + i32(5) + s("m") + i64(1000)


def test_offset_value_with_an_expire_timestamp_is_written_as_version_1() -> None:
    committed = CommittedOffset(42, 5, "m", 1000, expire_timestamp_ms=9000)
    # Version 1 has no leader epoch, as in Kafka.
    assert offset_commit_value(committed) == i16(1) + i64(42) + s("m") + i64(1000) + i64(9000)


OFFSET_VALUES = [
    pytest.param(i16(0) + i64(7) + s("x") + i64(100), CommittedOffset(7, -1, "x", 100), id="v0"),
    pytest.param(i16(1) + i64(7) + s("x") + i64(100) + i64(200), CommittedOffset(7, -1, "x", 100, 200), id="v1"),
    pytest.param(i16(2) + i64(7) + s("x") + i64(100), CommittedOffset(7, -1, "x", 100), id="v2"),
    pytest.param(i16(3) + i64(7) + i32(2) + s("x") + i64(100), CommittedOffset(7, 2, "x", 100), id="v3"),
    pytest.param(i16(4) + i64(7) + i32(2) + cs("x") + i64(100) + b"\x00", CommittedOffset(7, 2, "x", 100), id="v4"),
]


@pytest.mark.parametrize(("data", "expected"), OFFSET_VALUES)
def test_every_offset_value_version_kafka_has_written_decodes(data: bytes, expected: CommittedOffset) -> None:
    assert decode_offset_commit_value(data) == expected


MemberMetadata = GroupMetadataValue.MemberMetadata
MEMBER = MemberMetadata(
    member_id="c-1", group_instance_id="i-1", client_id="c", client_host="/127.0.0.1",
    rebalance_timeout=30000, session_timeout=10000, subscription=b"sub", assignment=b"asg",
)
GROUP = GroupMetadataValue(
    protocol_type="consumer", generation=4, protocol="range", leader="c-1",
    current_state_timestamp=1234, members=[MEMBER],
)


def test_group_value_is_written_as_version_3() -> None:
    expected = (
        i16(3) + s("consumer") + i32(4) + s("range") + s("c-1") + i64(1234) + i32(1)
        + s("c-1") + s("i-1") + s("c") + s("/127.0.0.1") + i32(30000) + i32(10000) + b(b"sub") + b(b"asg")
    )  # fmt: skip
    assert group_metadata_value(GROUP) == expected


def test_group_value_version_0_has_no_rebalance_timeout_and_uses_the_session_timeout() -> None:
    data = (
        i16(0) + s("consumer") + i32(1) + s("range") + s("m") + i32(1)
        + s("m") + s("c") + s("h") + i32(10000) + b(b"s") + b(b"a")
    )  # fmt: skip
    value = decode_group_metadata_value(data)
    assert value.current_state_timestamp == -1
    assert value.members[0].rebalance_timeout == 10000
    assert value.members[0].group_instance_id is None


def test_an_empty_group_value_has_null_protocol_and_leader() -> None:
    empty = GroupMetadataValue("consumer", 7, None, None, 99, [])
    data = group_metadata_value(empty)
    assert data == i16(3) + s("consumer") + i32(7) + s(None) + s(None) + i64(99) + i32(0)
    assert decode_group_metadata_value(data) == empty


def test_a_flexible_version_4_group_value_decodes() -> None:
    data = (
        i16(4) + cs("consumer") + i32(4) + cs("range") + cs("c-1") + i64(1234) + uvarint(2)
        + cs("c-1") + cs("i-1") + cs("c") + cs("/127.0.0.1") + i32(30000) + i32(10000)
        + uvarint(4) + b"sub" + uvarint(4) + b"asg" + b"\x00"
        + b"\x00"
    )  # fmt: skip
    assert decode_group_metadata_value(data) == GROUP


@pytest.mark.parametrize(
    "data",
    [b"", b"\x00", i16(1) + s("g"), i16(1) + s("g") + s("t") + i32(1) + b"x", i16(2) + i16(50) + b"short"],
    ids=["empty", "half-version", "missing-fields", "trailing-bytes", "overlong-string"],
)
def test_malformed_keys_raise_the_one_typed_error(data: bytes) -> None:
    with pytest.raises(OffsetsRecordError) as raised:
        decode_key(data)
    assert not raised.value.unknown_type


def test_keys_of_other_group_protocols_are_flagged_as_unknown_types() -> None:
    with pytest.raises(OffsetsRecordError) as raised:
        decode_key(i16(3) + s("g"))
    assert raised.value.unknown_type


def test_a_record_without_a_key_is_refused() -> None:
    with pytest.raises(OffsetsRecordError):
        decode_key(None)


@pytest.mark.parametrize("data", [b"", i16(3) + i64(1), i16(9) + i64(1) + s("") + i64(0), i16(-1)])
def test_malformed_offset_values_raise_the_one_typed_error(data: bytes) -> None:
    with pytest.raises(OffsetsRecordError):
        decode_offset_commit_value(data)


names = st.text(max_size=20)
offsets = st.builds(
    CommittedOffset,
    offset=st.integers(-1, 2**63 - 1),
    leader_epoch=st.integers(-1, 2**31 - 1),
    metadata=names,
    commit_timestamp_ms=st.integers(0, 2**48),
    expire_timestamp_ms=st.one_of(st.just(NO_EXPIRE_TIMESTAMP), st.integers(0, 2**48)),
)
members = st.builds(
    MemberMetadata,
    member_id=names, group_instance_id=st.one_of(st.none(), names), client_id=names, client_host=names,
    rebalance_timeout=st.integers(0, 2**31 - 1), session_timeout=st.integers(0, 2**31 - 1),
    subscription=st.binary(max_size=30), assignment=st.binary(max_size=30),
)
groups = st.builds(
    GroupMetadataValue,
    protocol_type=names, generation=st.integers(0, 2**31 - 1), protocol=st.one_of(st.none(), names),
    leader=st.one_of(st.none(), names), current_state_timestamp=st.integers(-1, 2**48),
    members=st.lists(members, max_size=4),
)


@settings(max_examples=150)
@given(offsets)
def test_offset_values_round_trip(committed: CommittedOffset) -> None:
    decoded = decode_offset_commit_value(offset_commit_value(committed))
    if committed.expire_timestamp_ms != NO_EXPIRE_TIMESTAMP:
        # Version 1 cannot carry a leader epoch.
        committed = CommittedOffset(committed.offset, -1, committed.metadata, committed.commit_timestamp_ms,
                                      committed.expire_timestamp_ms)
    assert decoded == committed


@settings(max_examples=150)
@given(groups)
def test_group_values_round_trip(value: GroupMetadataValue) -> None:
    assert decode_group_metadata_value(group_metadata_value(value)) == value


@settings(max_examples=200)
@given(st.binary(max_size=80))
def test_arbitrary_bytes_decode_or_raise_the_typed_error(data: bytes) -> None:
    for decode in (decode_key, decode_offset_commit_value, decode_group_metadata_value):
        try:
            decoded = decode(data)
        except OffsetsRecordError:
            continue
        assert decoded is not None
