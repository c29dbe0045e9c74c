"""Pre-encoded structs: a nested struct encoded once takes its place in messages encoded later, byte for byte."""

from __future__ import annotations

import pytest

from spate.protocol.connection import encode_response_parts
from spate.protocol.errors import ProtocolUsageError
from spate.protocol.framing import frame_length
from spate.protocol.messages.metadata import MetadataResponse
from spate.protocol.messages.update_metadata import UpdateMetadataRequest
from spate.protocol.pre_encoded import PreEncoded
from spate.protocol.schema import Array, Field, Struct, message
from spate.protocol.types import INT32, STRING, PartsBuffer

R = MetadataResponse

Holder = message(
    "HolderRequest",
    api_key=1001,
    versions=(0, 2),
    flexible_from=2,
    fields=[
        Field("inner", Struct("Inner", Field("label", STRING), Field("count", INT32)), nullable=True, default=None),
        Field("items", Array(Struct("Item", Field("id", INT32)))),
    ],
)


def topic(partitions: int = 3) -> object:
    return R.MetadataResponseTopic(
        error_code=0, name="orders", is_internal=False,
        partitions=[R.MetadataResponsePartition(error_code=0, partition_index=p, leader_id=1, leader_epoch=4,
                                                replica_nodes=[1, 2], isr_nodes=[1], offline_replicas=[2])
                    for p in range(partitions)],
    )


@pytest.mark.parametrize("version", range(0, 13))
def test_a_pre_encoded_array_element_encodes_as_the_value_itself_in_every_version(version: int) -> None:
    described = topic()
    plain = R(brokers=[], topics=[described, described]).encode(version)
    pre = R.SCHEMA.encode_struct(described, version)
    assert R(brokers=[], topics=[pre, described]).encode(version) == plain
    assert R.decode(plain, version).topics[0] == R.decode(R(topics=[pre]).encode(version), version).topics[0]


def test_encode_struct_names_the_struct_and_version_it_was_made_for() -> None:
    pre = R.SCHEMA.encode_struct(topic(), 9)
    assert (pre.struct, pre.version) == ("MetadataResponse.MetadataResponseTopic", 9)
    assert len(pre) == len(pre.data) > 0


def test_a_pre_encoded_struct_field_and_nullable_field_take_its_place() -> None:
    inner = Holder.Inner(label="x", count=7)
    for version in range(3):
        pre = Holder.SCHEMA.encode_struct(inner, version)
        assert Holder(inner=pre).encode(version) == Holder(inner=inner).encode(version)
        pre_item = Holder.SCHEMA.encode_struct(Holder.Item(id=5), version)
        assert Holder(items=[pre_item]).encode(version) == Holder(items=[Holder.Item(id=5)]).encode(version)


def test_bytes_encoded_at_another_version_are_refused() -> None:
    pre = R.SCHEMA.encode_struct(topic(), 8)
    with pytest.raises(ProtocolUsageError, match="v8 was pre-encoded, but .*MetadataResponseTopic v9"):
        R(topics=[pre]).encode(9)


def test_bytes_of_another_struct_are_refused() -> None:
    pre = R.SCHEMA.encode_struct(R.MetadataResponseBroker(node_id=1, host="h", port=1), 1)
    with pytest.raises(ProtocolUsageError, match="MetadataResponseBroker v1 was pre-encoded"):
        R(topics=[pre]).encode(1)


def test_a_struct_of_the_same_name_in_another_message_is_refused() -> None:
    # Struct names are unique within a message only: the message's name is part of the check.
    fake = PreEncoded("OtherResponse.MetadataResponseTopic", 1, b"\x00")
    with pytest.raises(ProtocolUsageError, match="OtherResponse.MetadataResponseTopic"):
        R(topics=[fake]).encode(1)


def test_encode_struct_refuses_a_struct_of_another_message_or_a_missing_version() -> None:
    with pytest.raises(ProtocolUsageError, match="has no struct"):
        R.SCHEMA.encode_struct(Holder.Item(id=1), 0)
    with pytest.raises(ProtocolUsageError, match="has no struct"):
        UpdateMetadataRequest.SCHEMA.encode_struct(topic(), 1)
    with pytest.raises(ProtocolUsageError, match="has no struct"):
        R.SCHEMA.encode_struct(topic(), 13)


def test_encode_struct_reports_a_value_that_does_not_fit() -> None:
    bad = R.MetadataResponseTopic(error_code=0, name="t", partitions=[R.MetadataResponsePartition(leader_id="x")])
    with pytest.raises(ProtocolUsageError, match="MetadataResponse.MetadataResponseTopic v1: partitions"):
        R.SCHEMA.encode_struct(bad, 1)


def test_large_pre_encoded_bytes_stay_out_of_line_in_a_parts_buffer() -> None:
    big = R.SCHEMA.encode_struct(topic(partitions=2000), 12)
    assert len(big) > 16384
    parts = encode_response_parts(7, 3, 12, R(topics=[big]))
    assert any(part is big.data for part in parts), "the pre-encoded bytes are sent as they are, not copied"
    whole = b"".join(bytes(part) for part in parts)
    assert frame_length(parts) == len(whole) and int.from_bytes(whole[:4], "big") == len(whole) - 4
    plain = b"".join(bytes(p) for p in encode_response_parts(7, 3, 12, R(topics=[topic(partitions=2000)])))
    assert whole == plain


def test_small_pre_encoded_bytes_are_copied_inline() -> None:
    small = R.SCHEMA.encode_struct(topic(partitions=1), 12)
    buf = PartsBuffer()
    R.SCHEMA.encode_into(buf, R(topics=[small]), 12)
    assert buf.deferred == []
