"""Declarations: what ``message()`` refuses at import, and the codecs it derives."""

from __future__ import annotations

import dataclasses

import pytest

from spate.protocol.errors import ProtocolDecodeError, ProtocolUsageError
from spate.protocol.schema import Array, Field, Message, SchemaError, Struct, message
from spate.protocol.types import (
    BOOLEAN,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    FileRangeRef,
    PartsBuffer,
)

Sample = message(
    "SampleRequest",
    api_key=1000,
    versions=(0, 3),
    flexible_from=2,
    fields=[
        Field("name", STRING),
        Field("added_in_v1", INT32, versions=(1, None), default=-1),
        Field("removed_after_v0", INT16, versions=(0, 0), default=7),
        Field("note", STRING, nullable=(1, None), default=""),
        Field(
            "items",
            Array(
                Struct(
                    "Item",
                    Field("id", INT64),
                    Field("payload", RECORDS, nullable=True),
                )
            ),
        ),
        Field("hint", INT32, versions=(2, None), tag=1, default=0),
        Field("flag", BOOLEAN, versions=(3, None), tag=0, default=False),
    ],
)


def test_generated_classes_are_slotted_dataclasses_with_every_field_defaulted() -> None:
    value = Sample()
    assert dataclasses.is_dataclass(value) and isinstance(value, Message)
    assert (value.name, value.added_in_v1, value.removed_after_v0, value.items) == ("", -1, 7, [])
    assert not hasattr(value, "__dict__")
    assert Sample.Item.__qualname__ == "SampleRequest.Item"
    assert Sample().items is not Sample().items, "array defaults must not be shared"


def test_v0_layout_is_the_fields_of_v0_in_declaration_order() -> None:
    value = Sample(name="a", removed_after_v0=2, note="n", items=[Sample.Item(5, b"r")])
    assert value.encode(0).hex() == "0001" "61" "0002" "0001" "6e" "00000001" "0000000000000005" "00000001" "72"


def test_fields_absent_from_a_version_are_ignored_on_encode_and_defaulted_on_decode() -> None:
    value = Sample(name="a", added_in_v1=99, removed_after_v0=2)
    decoded = Sample.decode(value.encode(0), 0)
    assert decoded.added_in_v1 == -1
    assert decoded.removed_after_v0 == 2
    decoded = Sample.decode(value.encode(1), 1)
    assert decoded.added_in_v1 == 99
    assert decoded.removed_after_v0 == 7


def test_flexible_versions_use_compact_encodings_and_end_each_struct_with_tagged_fields() -> None:
    value = Sample(name="a", added_in_v1=1, note=None, items=[Sample.Item(5, None)])
    assert value.encode(2).hex() == (
        "0261"  # compact string "a"
        "00000001"  # added_in_v1
        "00"  # note: compact null
        "02" "0000000000000005" "00" "00"  # one item: id, null records, item's tagged fields
        "00"  # message's tagged fields: hint is at its default, so none
    )


def test_tagged_fields_are_written_only_when_they_differ_from_the_default() -> None:
    value = Sample(name="", hint=300, flag=True)
    encoded = value.encode(3)
    # two fields in tag order: tag 0 (flag, 1 byte), tag 1 (hint, 4 bytes)
    assert encoded.endswith(bytes.fromhex("02" "00" "01" "01" "01" "04" "0000012c"))
    assert Sample.decode(encoded, 3) == value


def test_unknown_tags_are_skipped() -> None:
    encoded = Sample(name="x").encode(3)[:-1] + bytes.fromhex("01" "09" "02" "abcd")
    assert Sample.decode(encoded, 3) == Sample(name="x")


def test_a_tagged_field_that_does_not_fill_its_payload_is_refused() -> None:
    encoded = Sample(name="x").encode(3)[:-1] + bytes.fromhex("01" "01" "05" "0000000100")
    with pytest.raises(ProtocolDecodeError, match="hint"):
        Sample.decode(encoded, 3)


def test_null_is_refused_in_versions_where_the_field_is_not_nullable() -> None:
    with pytest.raises(ProtocolUsageError, match="note"):
        Sample(note=None).encode(0)
    assert Sample.decode(Sample(note=None).encode(1), 1).note is None


def test_encode_errors_name_the_path_to_the_bad_value() -> None:
    value = Sample(items=[Sample.Item(id="seven")])
    with pytest.raises(ProtocolUsageError, match=r"SampleRequest v1: items: id: "):
        value.encode(1)


def test_decode_errors_name_the_message_version_and_field() -> None:
    with pytest.raises(ProtocolDecodeError, match=r"SampleRequest v1: items: payload: "):
        Sample.decode(Sample(items=[Sample.Item(1, b"abc")]).encode(1)[:-1], 1)


def test_trailing_bytes_after_a_message_are_refused() -> None:
    with pytest.raises(ProtocolDecodeError, match="trailing"):
        Sample.decode(Sample().encode(1) + b"\x00", 1)


def test_undeclared_versions_are_a_usage_error_both_ways() -> None:
    with pytest.raises(ProtocolUsageError):
        Sample().encode(4)
    with pytest.raises(ProtocolUsageError):
        Sample.decode(b"", 4)


def test_file_range_records_encode_only_into_parts() -> None:
    value = Sample(items=[Sample.Item(1, FileRangeRef(10))])
    with pytest.raises(ProtocolUsageError, match="file range"):
        value.encode(1)
    buf = PartsBuffer()
    Sample.SCHEMA.encode_into(buf, value, 1)
    assert buf.deferred_size == 10


def declare(*fields: Field, versions: tuple[int, int] = (0, 3), flexible_from: int | None = None) -> type:
    return message("BadRequest", api_key=1001, versions=versions, flexible_from=flexible_from, fields=list(fields))


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda: declare(versions=(3, 1)), "bad version range"),
        (lambda: declare(Field("a", INT32, versions=(2, 5))), "outside the enclosing"),
        (lambda: declare(Field("a", INT32, versions=(1, None))), "needs an explicit default"),
        (lambda: declare(Field("a", STRING, nullable=(0, 5))), "nullable"),
        (lambda: declare(Field("a", INT32, nullable=True)), "cannot be nullable"),
        (lambda: declare(Field("a", INT32), Field("a", INT16)), "duplicate field"),
        (lambda: declare(Field("camelCase", INT32)), "snake_case"),
        (lambda: declare(Field("a", INT32, tag=0, default=0)), "flexible versions"),
        (lambda: declare(Field("a", STRING, default=None)), "does not fit"),
        (lambda: declare(Field("a", INT16, default=1 << 20)), "does not fit"),
        (lambda: declare(Field("a", Array(INT32), default=[1])), "array defaults"),
        (
            lambda: declare(
                Field("a", INT32, versions=(2, None), tag=0, default=0),
                Field("b", INT32, versions=(2, None), tag=0, default=0),
                flexible_from=2,
            ),
            "duplicate tag",
        ),
        (
            lambda: declare(Field("a", Array(Struct("X", Field("x", INT32)))), Field("b", Array(Struct("X")))),
            "share this name",
        ),
        (lambda: declare(Field("a", Array(Struct("lower", Field("x", INT32))))), "CamelCase"),
    ],
)
def test_contradictory_declarations_are_refused_at_import(make: object, problem: str) -> None:
    with pytest.raises(SchemaError, match=problem):
        make()  # type: ignore[operator]


def test_message_names_say_whether_they_are_requests_or_responses() -> None:
    with pytest.raises(SchemaError):
        message("Sample", api_key=1, versions=(0, 0), flexible_from=None, fields=[])
