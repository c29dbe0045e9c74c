"""Turns a checked declaration into dataclasses and per-version codecs.

For each struct and version it resolves which fields are on the wire, picks
each field's codec (compact variants in flexible versions, nullable variants
where null is allowed), and closes over those choices in one encoder and one
decoder, so a call does no lookups in the declaration.
"""

from __future__ import annotations

import keyword
import operator
from dataclasses import field as dataclass_field
from dataclasses import make_dataclass
from typing import Any, Callable, Sequence

from spate.protocol import types as t
from spate.protocol.declarations import MISSING, Array, Field, SchemaError, Struct
from spate.protocol.errors import ProtocolDecodeError, ProtocolUsageError
from spate.protocol.pre_encoded import PreEncoded, append_pre_encoded
from spate.protocol.types import Codec

_VARIANTS: dict[Codec, dict[tuple[bool, bool], Codec]] = {
    t.STRING: {
        (False, False): t.STRING,
        (True, False): t.NULLABLE_STRING,
        (False, True): t.COMPACT_STRING,
        (True, True): t.COMPACT_NULLABLE_STRING,
    },
    t.BYTES: {
        (False, False): t.BYTES,
        (True, False): t.NULLABLE_BYTES,
        (False, True): t.COMPACT_BYTES,
        (True, True): t.COMPACT_NULLABLE_BYTES,
    },
    # Records are nullable in every version Kafka defines.
    t.RECORDS: {
        (False, False): t.RECORDS,
        (True, False): t.RECORDS,
        (False, True): t.COMPACT_RECORDS,
        (True, True): t.COMPACT_RECORDS,
    },
}
_FIXED = (t.INT8, t.INT16, t.INT32, t.INT64, t.UINT16, t.UINT32, t.FLOAT64, t.BOOLEAN, t.UUID)
_ZERO: dict[Codec, Any] = {
    t.INT8: 0,
    t.INT16: 0,
    t.INT32: 0,
    t.INT64: 0,
    t.UINT16: 0,
    t.UINT32: 0,
    t.FLOAT64: 0.0,
    t.BOOLEAN: False,
    t.UUID: t.ZERO_UUID,
    t.STRING: "",
    t.BYTES: b"",
    t.RECORDS: None,
}
_ANNOTATION: dict[Codec, str] = {
    t.FLOAT64: "float",
    t.BOOLEAN: "bool",
    t.UUID: "uuid.UUID",
    t.STRING: "str",
    t.BYTES: "bytes",
    t.RECORDS: "bytes | memoryview | FileRangeRef",
}


def _in_span(version: int, span: tuple[int, int] | None) -> bool:
    return span is not None and span[0] <= version <= span[1]


class Builder:
    """Holds per-message state while a declaration is checked and compiled.

    Generated classes derive from ``message_base`` (the message itself) or
    ``struct_base`` (nested structs) and report ``module`` as their home.
    """

    def __init__(
        self,
        message_name: str,
        message_span: tuple[int, int],
        flexible_from: int | None,
        module: str,
        message_base: type,
        struct_base: type,
    ) -> None:
        self.message_name = message_name
        self.message_span = message_span
        self.flexible_from = flexible_from
        self.module = module
        self.message_base = message_base
        self.struct_base = struct_base
        self.classes: dict[str, type] = {}
        self.structs: dict[str, Struct] = {}
        self.struct_spans: dict[int, tuple[int, int]] = {}
        # Resolved spans, keyed by id(field): (versions, nullable versions or None).
        self.spans: dict[int, tuple[tuple[int, int], tuple[int, int] | None]] = {}
        self.compiled: dict[tuple[int, int], Codec] = {}

    def fail(self, where: str, problem: str) -> SchemaError:
        return SchemaError(f"{self.message_name}.{where}: {problem}")

    # -- checks -----------------------------------------------------------------------------

    def check_struct(self, struct: Struct, span: tuple[int, int]) -> None:
        known = self.structs.get(struct.name)
        if known is not None and known is not struct:
            raise self.fail(struct.name, "two different structs share this name")
        if not struct.name[:1].isupper():
            raise self.fail(struct.name, "struct names are CamelCase")
        if self.struct_spans.setdefault(id(struct), span) != span:
            raise self.fail(struct.name, "a shared struct must span the same versions everywhere")
        self.structs[struct.name] = struct
        names: set[str] = set()
        tags: set[int] = set()
        for f in struct.fields:
            where = f"{struct.name}.{f.name}"
            if not f.name.isidentifier() or keyword.iskeyword(f.name) or f.name != f.name.lower():
                raise self.fail(where, "field names are snake_case identifiers")
            if f.name in names:
                raise self.fail(where, "duplicate field name")
            names.add(f.name)
            versions = self.resolve_versions(where, f, span)
            nullable = self.resolve_nullable(where, f, versions)
            self.spans[id(f)] = (versions, nullable)
            self.check_type(where, f, versions, nullable)
            if f.tag is not None:
                if self.flexible_from is None or versions[0] < self.flexible_from or f.tag < 0:
                    raise self.fail(where, "tagged fields exist only in flexible versions")
                if f.tag in tags:
                    raise self.fail(where, f"duplicate tag {f.tag}")
                tags.add(f.tag)
            self.check_default(where, f, versions, span)

    def resolve_versions(self, where: str, f: Field, span: tuple[int, int]) -> tuple[int, int]:
        if f.versions is None:
            return span
        first, last = f.versions
        last = span[1] if last is None else last
        if not span[0] <= first <= last <= span[1]:
            raise self.fail(where, f"versions {f.versions} outside the enclosing {span}")
        return first, last

    def resolve_nullable(self, where: str, f: Field, versions: tuple[int, int]) -> tuple[int, int] | None:
        if f.nullable is False:
            return None
        if f.nullable is True:
            return versions
        first, last = f.nullable
        last = versions[1] if last is None else last
        if not versions[0] <= first <= last <= versions[1]:
            raise self.fail(where, f"nullable {f.nullable} outside the field's versions {versions}")
        return first, last

    def check_type(self, where: str, f: Field, versions: tuple[int, int], nullable: tuple[int, int] | None) -> None:
        kind = f.type
        if isinstance(kind, Struct):
            if nullable is not None and nullable != versions:
                raise self.fail(where, "a nullable struct field is nullable in all its versions")
            self.check_nested(where, kind, versions)
        elif isinstance(kind, Array):
            if isinstance(kind.of, Struct):
                self.check_nested(where, kind.of, versions)
            elif kind.of not in _VARIANTS and kind.of not in _FIXED:
                raise self.fail(where, f"unsupported array element {kind.of!r}")
        elif kind in _FIXED:
            if nullable is not None:
                raise self.fail(where, f"{kind!r} cannot be nullable")
        elif kind not in _VARIANTS:
            raise self.fail(where, f"unsupported type {kind!r}")

    def check_nested(self, where: str, struct: Struct, span: tuple[int, int]) -> None:
        """Check a struct held by a field that exists in ``span``."""
        if struct.versions is None:
            self.check_struct(struct, span)
            return
        message_span = self.message_span
        first, last = struct.versions
        own = (first, message_span[1] if last is None else last)
        if not message_span[0] <= own[0] <= own[1] <= message_span[1]:
            raise self.fail(struct.name, f"versions {struct.versions} outside the message's {message_span}")
        if not own[0] <= span[0] <= span[1] <= own[1]:
            raise self.fail(where, f"used in versions {span}, outside its struct's {own}")
        if id(struct) not in self.struct_spans:
            self.check_struct(struct, own)

    def check_default(self, where: str, f: Field, versions: tuple[int, int], span: tuple[int, int]) -> None:
        scalar = not isinstance(f.type, (Array, Struct))
        partial = versions != span or f.tag is not None
        if f.default is MISSING:
            if partial and scalar:
                raise self.fail(where, "a field missing from some versions needs an explicit default")
            return
        if isinstance(f.type, Struct):
            if f.default is None and f.nullable:
                return
            raise self.fail(where, "struct fields take their struct's defaults (or None when nullable)")
        if isinstance(f.type, Array):
            if f.default is not None:
                raise self.fail(where, "array defaults are empty (omit default) or None")
        # The default must be sendable in every version the field exists in.
        for version in range(versions[0], versions[1] + 1):
            try:
                self.field_codec(f, version).encode(t.PartsBuffer(), f.default)
            except (*t.ENCODE_FAILURES, ProtocolUsageError) as exc:
                raise self.fail(where, f"default {f.default!r} does not fit v{version}: {exc}") from exc

    # -- classes ----------------------------------------------------------------------------

    def make_class(self, struct: Struct) -> type:
        existing = self.classes.get(struct.name)
        if existing is not None:
            return existing
        base = self.message_base if struct.name == self.message_name else self.struct_base
        specs = []
        for f in struct.fields:
            annotation, default = self.class_field(f)
            specs.append((f.name, annotation, default))
        cls = make_dataclass(struct.name, specs, bases=(base,), slots=True)
        cls.__module__ = self.module
        if struct.name != self.message_name:
            cls.__qualname__ = f"{self.message_name}.{struct.name}"
        self.classes[struct.name] = cls
        return cls

    def class_field(self, f: Field) -> tuple[str, Any]:
        kind = f.type
        if isinstance(kind, Struct):
            cls = self.make_class(kind)
            if self.spans[id(f)][1] is not None:
                return kind.name + " | None", None if f.default is None else dataclass_field(default_factory=cls)
            return kind.name, dataclass_field(default_factory=cls)
        if isinstance(kind, Array):
            element = self.make_class(kind.of).__name__ if isinstance(kind.of, Struct) else _annotation(kind.of)
            annotation = f"list[{element}]" + (" | None" if self.spans[id(f)][1] is not None else "")
            if f.default is None:
                return annotation, None
            return annotation, dataclass_field(default_factory=list)
        default = _ZERO[kind] if f.default is MISSING else f.default
        nullable = self.spans[id(f)][1] is not None or kind is t.RECORDS
        return _annotation(kind) + (" | None" if nullable else ""), default

    def default_factory(self, f: Field) -> Callable[[], Any]:
        kind = f.type
        if isinstance(kind, Struct):
            return (lambda: None) if f.default is None else self.classes[kind.name]
        if isinstance(kind, Array) and f.default is MISSING:
            return list
        value = _ZERO[kind] if f.default is MISSING else f.default  # type: ignore[index]
        return lambda: value

    # -- codecs -----------------------------------------------------------------------------

    def flexible(self, version: int) -> bool:
        return self.flexible_from is not None and version >= self.flexible_from

    def field_codec(self, f: Field, version: int) -> Codec:
        versions, nullable = self.spans[id(f)]
        compact = self.flexible(version)
        kind = f.type
        if isinstance(kind, Struct):
            codec = self.struct_codec(kind, version)
            return _nullable_struct(codec) if _in_span(version, nullable) else codec
        if isinstance(kind, Array):
            if isinstance(kind.of, Struct):
                element = self.struct_codec(kind.of, version)
            else:
                element = _variant(kind.of, False, compact)
            return t.array_codec(element, nullable=_in_span(version, nullable), compact=compact)
        return _variant(kind, _in_span(version, nullable), compact)

    def struct_codec(self, struct: Struct, version: int) -> Codec:
        key = (id(struct), version)
        codec = self.compiled.get(key)
        if codec is None:
            codec = self.compile_struct(struct, version)
            self.compiled[key] = codec
        return codec

    def qualified_name(self, struct: Struct) -> str:
        """``<message>.<struct>``: struct names are unique within a message, not across messages."""
        return f"{self.message_name}.{struct.name}"

    def compile_struct(self, struct: Struct, version: int) -> Codec:
        cls = self.make_class(struct)
        flexible = self.flexible(version)
        names = [f.name for f in struct.fields]
        decoders: list[t.Decoder] = []
        wire: list[tuple[str, Codec]] = []
        tagged: list[tuple[int, int, Field, Codec]] = []
        for index, f in enumerate(struct.fields):
            present = _in_span(version, self.spans[id(f)][0])
            if present and f.tag is None:
                codec = self.field_codec(f, version)
                wire.append((f.name, codec))
                decoders.append(codec.decode)
                continue
            decoders.append(_filler(self.default_factory(f)))
            if present and flexible:
                tagged.append((f.tag, index, f, self.field_codec(f, version)))  # type: ignore[arg-type]
        tagged.sort(key=lambda item: item[0])
        min_size = sum(codec.min_size for _, codec in wire) + (1 if flexible else 0)
        encode = _struct_encoder(struct.name, wire, tagged if flexible else None,
                                 pre_encoded_as=(self.qualified_name(struct), version))
        decode = _struct_decoder(cls, names, decoders, tagged if flexible else None)
        return Codec(struct.name, encode, decode, min_size)


def _annotation(kind: Codec) -> str:
    return _ANNOTATION.get(kind, "int")


def _variant(kind: Codec, nullable: bool, compact: bool) -> Codec:
    variants = _VARIANTS.get(kind)
    if variants is None:
        return kind  # fixed-size types look the same in every encoding
    return variants[(nullable, compact)]


def _filler(factory: Callable[[], Any]) -> t.Decoder:
    """A pseudo-decoder for a field absent from this version: its default, no bytes read."""

    def fill(mv: memoryview, pos: int) -> tuple[Any, int]:
        return factory(), pos

    return fill


def _getter(names: Sequence[str]) -> Callable[[Any], tuple[Any, ...]]:
    if not names:
        return lambda obj: ()
    if len(names) == 1:
        name = names[0]
        return lambda obj: (getattr(obj, name),)
    return operator.attrgetter(*names)  # returns a tuple for two or more names


def _struct_encoder(
    struct_name: str,
    wire: list[tuple[str, Codec]],
    tagged: list[tuple[int, int, Field, Codec]] | None,
    *,
    pre_encoded_as: tuple[str, int],
) -> t.Encoder:
    """``pre_encoded_as``: the (qualified struct name, version) a :class:`PreEncoded` value must have been
    encoded as to be appended in place of one of these structs."""
    names = [name for name, _ in wire]
    qualified, version = pre_encoded_as
    encoders = [codec.encode for _, codec in wire]
    get_values = _getter(names)
    failures = (*t.ENCODE_FAILURES, ProtocolUsageError)

    def encode(buf: bytearray, obj: Any) -> None:
        if obj.__class__ is PreEncoded:
            append_pre_encoded(buf, obj, qualified, version)
            return
        try:
            values = get_values(obj)
            for encode_field, value in zip(encoders, values):
                encode_field(buf, value)
        except failures as exc:
            raise _locate_failure(struct_name, names, encoders, obj, exc) from exc
        if tagged is not None:
            _encode_tagged(buf, obj, tagged)

    return encode


def _locate_failure(
    struct_name: str, names: list[str], encoders: list[t.Encoder], obj: Any, exc: BaseException
) -> ProtocolUsageError:
    """Name the field whose value failed to encode (only runs on the error path).

    Nested structs raise already-located errors, so the message reads as a
    path: ``topic_data: partition_data: records: TypeError: ...``.
    """
    for name, encode_field in zip(names, encoders):
        try:
            encode_field(t.PartsBuffer(), getattr(obj, name))
        except ProtocolUsageError as inner:
            return ProtocolUsageError(f"{name}: {inner}")
        except Exception as inner:  # noqa: BLE001 - reported with its type, never swallowed
            return ProtocolUsageError(f"{name}: {type(inner).__name__}: {inner}")
    return ProtocolUsageError(f"{struct_name}: {type(exc).__name__}: {exc}")


def _encode_tagged(buf: bytearray, obj: Any, tagged: list[tuple[int, int, Field, Codec]]) -> None:
    fields = []
    for tag, _, f, codec in tagged:
        payload = bytearray()
        try:
            value = getattr(obj, f.name)
            if _is_default(f, value):
                continue
            codec.encode(payload, value)
        except (*t.ENCODE_FAILURES, ProtocolUsageError) as exc:
            raise ProtocolUsageError(f"{f.name}: {type(exc).__name__}: {exc}") from exc
        fields.append((tag, bytes(payload)))
    if fields:
        t.encode_tagged_fields(buf, fields)
    else:
        buf += t.EMPTY_TAGGED_FIELDS


def _nullable_struct(codec: Codec) -> Codec:
    """Kafka's nullable struct: an int8 marker, -1 for null, 1 before a present struct."""
    encode_struct, decode_struct = codec.encode, codec.decode

    def encode(buf: bytearray, value: Any) -> None:
        if value is None:
            buf += b"\xff"
            return
        buf += b"\x01"
        encode_struct(buf, value)

    def decode(mv: memoryview, pos: int) -> tuple[Any, int]:
        if pos >= len(mv):
            raise ProtocolDecodeError(f"{codec.name}: missing its null marker")
        marker = mv[pos]
        if marker == 0xFF:
            return None, pos + 1
        if marker != 1:
            raise ProtocolDecodeError(f"{codec.name}: null marker {marker} is neither -1 nor 1")
        return decode_struct(mv, pos + 1)

    return Codec(codec.name, encode, decode, 1)


def _is_default(f: Field, value: Any) -> bool:
    if isinstance(f.type, Array):
        return value == [] if f.default is MISSING else value is None
    if isinstance(f.type, Struct):
        return bool(value == type(value)())
    return bool(value == (_ZERO[f.type] if f.default is MISSING else f.default))  # type: ignore[index]


def _struct_decoder(
    cls: type,
    names: list[str],
    decoders: list[t.Decoder],
    tagged: list[tuple[int, int, Field, Codec]] | None,
) -> t.Decoder:
    if tagged is None:

        def decode(mv: memoryview, pos: int) -> tuple[Any, int]:
            values: list[Any] = []
            append = values.append
            try:
                for decode_field in decoders:
                    value, pos = decode_field(mv, pos)
                    append(value)
            except ProtocolDecodeError as exc:
                raise ProtocolDecodeError(f"{names[len(values)]}: {exc}") from None
            return cls(*values), pos

        return decode

    by_tag = {tag: (index, codec.decode, f.name) for tag, index, f, codec in tagged}

    def decode_flexible(mv: memoryview, pos: int) -> tuple[Any, int]:
        values: list[Any] = []
        append = values.append
        try:
            for decode_field in decoders:
                value, pos = decode_field(mv, pos)
                append(value)
        except ProtocolDecodeError as exc:
            raise ProtocolDecodeError(f"{names[len(values)]}: {exc}") from None
        section, pos = t.decode_tagged_fields(mv, pos)
        for tag, start, end in section:
            known = by_tag.get(tag)
            if known is None:
                continue  # tags from newer versions are skipped, as Kafka does
            index, decode_field, name = known
            try:
                value, used = decode_field(mv[:end], start)
            except ProtocolDecodeError as exc:
                raise ProtocolDecodeError(f"{name}: {exc}") from None
            if used != end:
                raise ProtocolDecodeError(f"{name}: tagged field has {end - used} unread bytes")
            values[index] = value
        return cls(*values), pos

    return decode_flexible
