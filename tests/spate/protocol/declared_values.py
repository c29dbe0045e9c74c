"""Test helpers that read a message declaration: hypothesis values for a version, and what a version keeps.

Both walk the declaration on their own (not through the compiled codecs), so
they check the codec rather than repeat it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import strategies as st

from spate.protocol import types as t
from spate.protocol.schema import Array, Field, MessageSchema, Struct

_INT_BITS = {t.INT8: 8, t.INT16: 16, t.INT32: 32, t.INT64: 64}
_NAMES = st.text(alphabet="abcxyz-._0é€", max_size=12)


def _span(declared: tuple[int, int | None] | None, parent: tuple[int, int]) -> tuple[int, int]:
    if declared is None:
        return parent
    return declared[0], parent[1] if declared[1] is None else declared[1]


def _struct_span(schema: MessageSchema, struct: Struct, use_site: tuple[int, int]) -> tuple[int, int]:
    """A common struct reads its fields against its own versions, any other against where it is used."""
    if struct.versions is None:
        return use_site
    return _span(struct.versions, (schema.versions.min, schema.versions.max))


def _nullable_at(f: Field, versions: tuple[int, int], version: int) -> bool:
    if f.nullable is False:
        return False
    span = versions if f.nullable is True else _span(f.nullable, versions)
    return span[0] <= version <= span[1]


def values(schema: MessageSchema, version: int) -> st.SearchStrategy[Any]:
    """Any value that ``version`` can carry; fields absent from it keep their defaults."""
    root_span = (schema.versions.min, schema.versions.max)
    return _struct_values(schema, schema.root, root_span, version)


def _struct_values(schema: MessageSchema, struct: Struct, span: tuple[int, int], version: int) -> Any:
    span = _struct_span(schema, struct, span)
    fields = {}
    for f in struct.fields:
        versions = _span(f.versions, span)
        if not versions[0] <= version <= versions[1]:
            continue
        strategy = _type_values(schema, f.type, versions, version)
        fields[f.name] = st.none() | strategy if _nullable_at(f, versions, version) else strategy
    return st.builds(schema.classes[struct.name], **fields)


def _type_values(schema: MessageSchema, kind: Any, versions: tuple[int, int], version: int) -> Any:
    if isinstance(kind, Struct):
        return _struct_values(schema, kind, versions, version)
    if isinstance(kind, Array):
        return st.lists(_type_values(schema, kind.of, versions, version), max_size=3)
    if kind in _INT_BITS:
        bits = _INT_BITS[kind]
        return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if kind is t.BOOLEAN:
        return st.booleans()
    if kind is t.STRING:
        return _NAMES
    if kind is t.UUID:
        return st.uuids(allow_nil=True)
    raise AssertionError(f"no strategy for {kind!r}")


def kept_by(value: Any, schema: MessageSchema, version: int) -> Any:
    """``value`` as ``version`` carries it: every field absent from that version back at its default."""
    root_span = (schema.versions.min, schema.versions.max)
    return _kept_struct(value, schema, schema.root, root_span, version)


def _kept_struct(value: Any, schema: MessageSchema, struct: Struct, span: tuple[int, int], version: int) -> Any:
    span = _struct_span(schema, struct, span)
    fresh = schema.classes[struct.name]()
    kept = {}
    for f in struct.fields:
        versions = _span(f.versions, span)
        if not versions[0] <= version <= versions[1]:
            kept[f.name] = getattr(fresh, f.name)
            continue
        kept[f.name] = _kept_field(getattr(value, f.name), schema, f.type, versions, version)
    return dataclasses.replace(value, **kept)


def _kept_field(value: Any, schema: MessageSchema, kind: Any, versions: tuple[int, int], version: int) -> Any:
    if value is None:
        return None
    if isinstance(kind, Struct):
        return _kept_struct(value, schema, kind, versions, version)
    if isinstance(kind, Array) and isinstance(kind.of, Struct):
        return [_kept_struct(item, schema, kind.of, versions, version) for item in value]
    return value
