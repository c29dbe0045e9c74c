"""Field-by-field reading of a coordinator record's key or value.

``__consumer_offsets`` and ``__transaction_state`` store keys and values as
an int16 version followed by protocol primitives; flexible versions use the
compact forms and end every struct with a tagged-field section. A reader
turns every decoding failure into the caller's own error type, naming what
was being read, so a loader can report and skip a bad record.
"""

from __future__ import annotations

from typing import Any, Callable

from spate.protocol import types as t
from spate.protocol.errors import ProtocolDecodeError


class RecordFieldReader:
    """Sequential reads over one key or value."""

    def __init__(self, data: bytes | memoryview, what: str, error: Callable[[str], Exception]) -> None:
        self.mv = memoryview(data)
        self.pos = 0
        self.what = what
        self.flexible = False
        self._error = error

    def fail(self, reason: str) -> Exception:
        return self._error(f"{self.what}: {reason}")

    def read(self, codec: t.Codec) -> Any:
        try:
            value, self.pos = codec.decode(self.mv, self.pos)
        except ProtocolDecodeError as exc:
            raise self.fail(str(exc)) from None
        return value

    def string(self, *, nullable: bool = False) -> str | None:
        if self.flexible:
            return self.read(t.COMPACT_NULLABLE_STRING if nullable else t.COMPACT_STRING)
        return self.read(t.NULLABLE_STRING if nullable else t.STRING)

    def bytes_(self) -> bytes:
        return bytes(self.read(t.COMPACT_BYTES if self.flexible else t.BYTES))

    def count(self, *, nullable: bool = False) -> int:
        """An array length; -1 (null) only when ``nullable``."""
        size = self.read(t.UNSIGNED_VARINT) - 1 if self.flexible else self.read(t.INT32)
        if size == -1 and nullable:
            return -1
        if size < 0 or size > len(self.mv) - self.pos:
            raise self.fail(f"bad array length {size}")
        return size

    def end_struct(self) -> None:
        if self.flexible:
            try:
                self.pos = t.skip_tagged_fields(self.mv, self.pos)
            except ProtocolDecodeError as exc:
                raise self.fail(str(exc)) from None

    def finish(self) -> None:
        if self.pos != len(self.mv):
            raise self.fail(f"{len(self.mv) - self.pos} trailing bytes")
