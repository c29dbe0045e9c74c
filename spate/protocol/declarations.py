"""The vocabulary of message declarations: fields, arrays and structs.

These objects only describe; :mod:`spate.protocol.schema` checks a
declaration and derives its classes and codecs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spate.protocol.types import Codec


class SchemaError(Exception):
    """A message declaration that contradicts itself; raised at import time."""


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

VersionSpan = tuple[int, "int | None"]


class Field:
    """One field of a struct.

    ``versions``: ``(first, last)`` with ``last=None`` meaning "and every later
    version"; omitted means the same versions as the enclosing struct.
    ``nullable``: ``True`` for every version the field exists in, or a span.
    ``default``: the value for versions without the field; omitted, it is the
    type's zero (0, False, "", b"", an empty list, None for records), as in
    Kafka, so a nullable field defaults to null only when declared so.
    ``tag``: the field is a tagged field (flexible versions only).
    """

    __slots__ = ("name", "type", "versions", "nullable", "default", "tag")

    def __init__(
        self,
        name: str,
        type: Codec | Array | Struct,
        *,
        versions: VersionSpan | None = None,
        nullable: VersionSpan | bool = False,
        default: Any = MISSING,
        tag: int | None = None,
    ) -> None:
        self.name = name
        self.type = type
        self.versions = versions
        self.nullable = nullable
        self.default = default
        self.tag = tag

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.type!r}, versions={self.versions})"


class Array:
    """An array whose elements are a primitive codec or a struct."""

    __slots__ = ("of",)

    def __init__(self, of: Codec | Struct) -> None:
        self.of = of

    def __repr__(self) -> str:
        return f"Array({self.of!r})"


class Struct:
    """A named group of fields; it becomes a dataclass of the same name.

    ``versions`` makes it a common struct (Kafka's ``commonStructs``): one
    class that several fields share although they exist in different versions
    (a v0 flat partition list and a v2 per-topic one, say). Its fields' spans
    are then read against ``versions`` (``last=None``: the message's last
    version) instead of against the field that holds it; every such field
    must lie within it. Without ``versions`` a shared struct must be used in
    the same versions everywhere.
    """

    __slots__ = ("name", "fields", "versions")

    def __init__(self, name: str, *fields: Field, versions: VersionSpan | None = None) -> None:
        self.name = name
        self.fields = fields
        self.versions = versions

    def __repr__(self) -> str:
        return f"Struct({self.name!r})"
