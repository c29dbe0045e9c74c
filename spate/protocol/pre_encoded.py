"""A nested struct already encoded: bytes that take the struct's place in a message being encoded.

A server that sends the same large struct again and again (Metadata's
entry for a topic of 10,000 partitions) encodes it once with
:meth:`~spate.protocol.schema.MessageSchema.encode_struct` and puts the
:class:`PreEncoded` value wherever a value of that struct goes (an array
element, a struct field); the message's encoder appends its bytes as they
are. The bytes are only valid for the struct and version they were made
for, so the value carries both and the encoder refuses any other place
(:class:`~spate.protocol.errors.ProtocolUsageError`): a mistake is an
error, never a malformed frame.

Into a :class:`~spate.protocol.types.PartsBuffer`, bytes of at least its
``inline_limit`` stay out of line like large records, so encoding the
frame does not copy them.
"""

from __future__ import annotations

from dataclasses import dataclass

from spate.protocol.errors import ProtocolUsageError
from spate.protocol.types import PartsBuffer


@dataclass(frozen=True, slots=True)
class PreEncoded:
    """``data``: one value of struct ``struct`` (``"<message>.<struct>"``) encoded at ``version``."""

    struct: str
    version: int
    data: bytes

    def __len__(self) -> int:
        return len(self.data)


def append_pre_encoded(buf: bytearray, value: PreEncoded, struct: str, version: int) -> None:
    """Append ``value``'s bytes where a ``struct`` of ``version`` is being encoded."""
    if value.struct != struct or value.version != version:
        raise ProtocolUsageError(
            f"{value.struct} v{value.version} was pre-encoded, but {struct} v{version} is being encoded")
    data = value.data
    if isinstance(buf, PartsBuffer) and len(data) >= buf.inline_limit:
        buf.defer(data)
    else:
        buf += data
