"""Messages declared once as data, with per-version codecs derived from them.

A declaration is a tree of :class:`Field` objects, as in Kafka's message JSON
files::

    FetchRequest = message(
        "FetchRequest", api_key=ApiKey.FETCH, versions=(4, 11), flexible_from=12,
        fields=[
            Field("replica_id", INT32),
            Field("isolation_level", INT8, versions=(4, None), default=0),
            Field("topics", Array(Struct("FetchTopic",
                Field("topic", STRING),
                Field("partitions", Array(INT32)),
            ))),
        ],
    )

``message()`` checks the declaration (version ranges nested and ordered,
explicit defaults for fields that some versions lack, defaults that fit their
type, unique names and tags), generates a slotted dataclass per struct, and
precompiles an encoder and a decoder for every declared version, so that the
hot paths do no per-call interpretation of the declaration.

Semantics, following Kafka's generator:

* a field absent from a version is not on the wire; decoding fills in its
  default and encoding ignores whatever value it holds;
* in flexible versions (``>= flexible_from``) strings, bytes, records and
  arrays use compact encodings and every struct ends with a tagged-field
  section; unknown tags are skipped, known ones (``Field(tag=...)``) decoded,
  and a tagged field is written only when its value differs from the default;
* ``nullable`` names the versions in which ``None`` may be sent.
"""

from __future__ import annotations

import sys
from typing import Any, ClassVar, Sequence

from spate.protocol.compiler import Builder
from spate.protocol.declarations import MISSING, Array, Field, SchemaError, Struct
from spate.protocol.errors import ProtocolDecodeError, ProtocolUsageError
from spate.protocol.pre_encoded import PreEncoded
from spate.protocol.types import Codec
from spate.protocol.versions import VersionRange

__all__ = [
    "MISSING",
    "Array",
    "Field",
    "Message",
    "MessageSchema",
    "SchemaError",
    "Struct",
    "StructValue",
    "build_message",
    "message",
]


class Message:
    """Base of every generated request/response class."""

    __slots__ = ()
    SCHEMA: ClassVar[MessageSchema]

    def encode(self, version: int) -> bytes:
        return self.SCHEMA.encode(self, version)

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview, version: int) -> Any:
        return cls.SCHEMA.decode(data, version)


class StructValue:
    """Base of every generated nested struct class."""

    __slots__ = ()


class MessageSchema:
    """A compiled message: its metadata and one codec per declared version."""

    def __init__(
        self,
        name: str,
        api_key: int,
        versions: VersionRange,
        flexible_from: int | None,
        root: Struct,
        codecs: dict[int, Codec],
        classes: dict[str, type],
        struct_codecs: dict[tuple[str, int], Codec] | None = None,
    ) -> None:
        self.name = name
        self.api_key = api_key
        self.is_request = name.endswith("Request")
        self.versions = versions
        self.flexible_from = flexible_from
        self.root = root
        self.classes = classes
        self._codecs = codecs
        self._struct_codecs = struct_codecs or {}

    def __repr__(self) -> str:
        return f"<MessageSchema {self.name} v{self.versions.min}-{self.versions.max}>"

    def is_flexible(self, version: int) -> bool:
        return self.flexible_from is not None and version >= self.flexible_from

    def codec(self, version: int) -> Codec:
        codec = self._codecs.get(version)
        if codec is None:
            raise ProtocolUsageError(f"{self.name} has no version {version}")
        return codec

    def encode_into(self, buf: bytearray, value: Any, version: int) -> None:
        """Append ``value`` encoded at ``version``; ProtocolUsageError if it does not fit."""
        codec = self.codec(version)
        try:
            codec.encode(buf, value)
        except ProtocolUsageError as exc:
            raise ProtocolUsageError(f"{self.name} v{version}: {exc}") from exc.__cause__

    def encode(self, value: Any, version: int) -> bytes:
        buf = bytearray()
        self.encode_into(buf, value, version)
        return bytes(buf)

    def encode_struct(self, value: StructValue, version: int) -> PreEncoded:
        """One nested struct of this message encoded at ``version``, to put in place of such a struct in
        messages encoded later at that version (see :mod:`spate.protocol.pre_encoded`)."""
        name = type(value).__name__
        codec = self._struct_codecs.get((name, version))
        if codec is None or self.classes.get(name) is not type(value):
            raise ProtocolUsageError(f"{self.name} v{version} has no struct {type(value).__qualname__}")
        buf = bytearray()
        try:
            codec.encode(buf, value)
        except ProtocolUsageError as exc:
            raise ProtocolUsageError(f"{self.name}.{name} v{version}: {exc}") from exc.__cause__
        return PreEncoded(f"{self.name}.{name}", version, bytes(buf))

    def decode_from(self, mv: memoryview, pos: int, version: int) -> tuple[Any, int]:
        """Decode one message at ``pos``; ProtocolDecodeError for any malformed input."""
        codec = self.codec(version)
        try:
            return codec.decode(mv, pos)
        except ProtocolDecodeError as exc:
            raise ProtocolDecodeError(f"{self.name} v{version}: {exc}") from None

    def decode(self, data: bytes | bytearray | memoryview, version: int) -> Any:
        """Decode a buffer that holds exactly one message."""
        mv = memoryview(data)
        value, end = self.decode_from(mv, 0, version)
        if end != len(mv):
            raise ProtocolDecodeError(f"{self.name} v{version}: {len(mv) - end} trailing bytes")
        return value


def message(
    name: str,
    *,
    api_key: int,
    versions: tuple[int, int],
    flexible_from: int | None,
    fields: Sequence[Field],
) -> type[Any]:
    """Check a declaration, generate its classes and compile every version.

    Returns the message's dataclass; nested struct classes are attributes of
    it (``ProduceRequest.TopicProduceData``) and its ``SCHEMA`` is the
    :class:`MessageSchema`.
    """
    if not (name.endswith("Request") or name.endswith("Response")):
        raise SchemaError(f"{name}: message names end in Request or Response")
    module = sys._getframe(1).f_globals.get("__name__", __name__)
    return build_message(
        name, api_key=api_key, versions=versions, flexible_from=flexible_from, fields=fields, module=module, base=Message
    )


def build_message(
    name: str,
    *,
    api_key: int,
    versions: tuple[int, int],
    flexible_from: int | None,
    fields: Sequence[Field],
    module: str,
    base: type[Message],
) -> type[Any]:
    """What :func:`message` does once the name is checked; the class derives from ``base``
    and reports ``module`` as its home."""
    low, high = versions
    if not 0 <= low <= high:
        raise SchemaError(f"{name}: bad version range {versions}")
    if flexible_from is not None and flexible_from < 0:
        raise SchemaError(f"{name}: bad flexible_from {flexible_from}")
    root = Struct(name, *fields)
    builder = Builder(name, (low, high), flexible_from, module, base, StructValue)
    builder.check_struct(root, (low, high))
    cls = builder.make_class(root)
    codecs = {v: builder.struct_codec(root, v) for v in range(low, high + 1)}
    struct_codecs = {
        (struct_name, v): builder.compiled[(id(struct), v)]
        for struct_name, struct in builder.structs.items()
        for v in range(low, high + 1)
        if (id(struct), v) in builder.compiled and struct is not root
    }
    schema = MessageSchema(name, api_key, VersionRange(low, high), flexible_from, root, codecs, builder.classes,
                           struct_codecs)
    cls.SCHEMA = schema
    for struct_name, struct_cls in builder.classes.items():
        if struct_cls is not cls:
            setattr(cls, struct_name, struct_cls)
    return cls
