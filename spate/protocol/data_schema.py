"""Kafka's messages of type "data": records that are stored, not sent, declared like requests.

The keys and values of ``__consumer_offsets`` and ``__transaction_state``
are such messages (Kafka's OffsetCommitKey, TransactionLogValue, ...). They
are declared with the same :class:`Field`, :class:`Struct` and
:class:`Array` as requests and get the same generated classes and codecs,
but they have no API key, and a stored record carries its version in front
of it: an int16 version, then the message encoded at that version (Kafka's
``MessageUtil.toVersionPrefixedBytes``).
"""

from __future__ import annotations

import sys
from typing import Any, Sequence

from spate.protocol.declarations import Field
from spate.protocol.errors import ProtocolDecodeError
from spate.protocol.schema import Message, build_message
from spate.protocol.types import INT16

__all__ = ["DataMessage", "data_message", "read_version"]

# Data messages are not requests: no API key names them.
NO_API_KEY = -1


class DataMessage(Message):
    """Base of every generated data message."""

    __slots__ = ()

    def to_version_prefixed_bytes(self, version: int) -> bytes:
        """The int16 ``version``, then this message encoded at ``version``."""
        buf = bytearray()
        INT16.encode(buf, version)
        self.SCHEMA.encode_into(buf, self, version)
        return bytes(buf)

    @classmethod
    def decode_version(cls, body: bytes | memoryview, version: int) -> Any:
        """The message encoded at ``version`` in ``body``; ProtocolDecodeError if that
        version is not declared or ``body`` is not exactly one message."""
        if version not in cls.SCHEMA.versions:
            raise ProtocolDecodeError(f"{cls.SCHEMA.name} version {version} is unknown")
        return cls.SCHEMA.decode(body, version)

    @classmethod
    def from_version_prefixed_bytes(cls, data: bytes | memoryview) -> Any:
        version, body = read_version(data)
        return cls.decode_version(body, version)


def read_version(data: bytes | memoryview) -> tuple[int, memoryview]:
    """The int16 version in front of a stored message, and the bytes after it."""
    mv = memoryview(data)
    version, pos = INT16.decode(mv, 0)
    return version, mv[pos:]


def data_message(
    name: str,
    *,
    versions: tuple[int, int],
    flexible_from: int | None,
    fields: Sequence[Field],
) -> type[Any]:
    """Check a data message's declaration, generate its classes and compile every version.

    As :func:`spate.protocol.schema.message`, for a message with no API key
    whose class derives from :class:`DataMessage`.
    """
    module = sys._getframe(1).f_globals.get("__name__", __name__)
    return build_message(
        name,
        api_key=NO_API_KEY,
        versions=versions,
        flexible_from=flexible_from,
        fields=fields,
        module=module,
        base=DataMessage,
    )
