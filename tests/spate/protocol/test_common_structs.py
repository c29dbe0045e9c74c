"""Common structs: one class shared by fields that exist in different versions."""

from __future__ import annotations

import pytest

from spate.protocol.schema import Array, Field, SchemaError, Struct, message
from spate.protocol.types import INT32, STRING

_State = Struct(
    "PartitionState",
    Field("topic", STRING, versions=(0, 1), default=""),
    Field("partition", INT32),
    Field("epoch", INT32, versions=(3, None), default=-1),
    versions=(0, None),
)

Grouped = message(
    "GroupedRequest",
    api_key=1001,
    versions=(0, 3),
    flexible_from=3,
    fields=[
        Field("flat", Array(_State), versions=(0, 1)),
        Field(
            "topics",
            Array(Struct("Topic", Field("name", STRING), Field("partitions", Array(_State)))),
            versions=(2, None),
        ),
    ],
)


def test_both_layouts_share_one_class() -> None:
    flat = Grouped(flat=[Grouped.PartitionState(topic="t", partition=1)])
    grouped = Grouped(topics=[Grouped.Topic("t", [Grouped.PartitionState(partition=1, epoch=4)])])
    assert type(flat.flat[0]) is type(grouped.topics[0].partitions[0])
    assert Grouped.decode(flat.encode(1), 1) == flat
    assert Grouped.decode(grouped.encode(3), 3) == grouped


def test_fields_follow_the_common_struct_versions_wherever_it_is_used() -> None:
    # v1: the flat list carries the topic name; v2: the grouped list does not, v3 adds the epoch.
    assert Grouped(flat=[Grouped.PartitionState("t", 7)]).encode(1).hex() == "00000001" "0001" "74" "00000007"
    grouped = Grouped(topics=[Grouped.Topic("t", [Grouped.PartitionState("ignored", 7, 9)])])
    assert grouped.encode(2).hex() == "00000001" "0001" "74" "00000001" "00000007"
    decoded = Grouped.decode(grouped.encode(2), 2)
    assert decoded.topics[0].partitions[0] == Grouped.PartitionState(partition=7)


def test_a_common_struct_used_outside_its_versions_is_refused() -> None:
    late = Struct("Late", Field("x", INT32), versions=(2, None))
    with pytest.raises(SchemaError, match="outside its struct"):
        message("BadRequest", api_key=1002, versions=(0, 3), flexible_from=None, fields=[Field("xs", Array(late))])


def test_a_common_struct_beyond_the_message_versions_is_refused() -> None:
    wide = Struct("Wide", Field("x", INT32), versions=(0, 9))
    with pytest.raises(SchemaError, match="outside the message"):
        message("BadRequest", api_key=1002, versions=(0, 3), flexible_from=None, fields=[Field("xs", Array(wide))])


def test_a_plain_struct_shared_across_different_versions_is_still_refused() -> None:
    plain = Struct("Plain", Field("x", INT32))
    with pytest.raises(SchemaError, match="same versions everywhere"):
        message(
            "BadRequest",
            api_key=1002,
            versions=(0, 3),
            flexible_from=None,
            fields=[Field("a", Array(plain), versions=(0, 1)), Field("b", Array(plain), versions=(2, None))],
        )
