"""Kafka's JSON conventions for znode data, written compactly and read strictly.

Kafka writes znode JSON with Jackson: compact (no spaces), UTF-8, integers as
JSON numbers except where a value may exceed what JavaScript-era readers
handle (timestamps, producer ids), which are decimal strings. Topic and
cluster ids are 16-byte UUIDs in URL-safe base64 without padding (22 chars).

:class:`JsonFields` reads one znode's object and turns every missing field,
wrong type or out-of-range number into a :class:`ZNodeDecodeError` that names
the znode's path and the field; nothing is guessed.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from typing import Any, Mapping

from broker_core.cluster.zk.errors import ZNodeDecodeError

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def encode_json(document: Mapping[str, Any]) -> bytes:
    """Compact UTF-8 JSON, keys in the order given (Kafka's own order where it has a fixed one)."""
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def encode_uuid(value: uuid.UUID) -> str:
    """Kafka's text form of a UUID: URL-safe base64 of its 16 bytes, unpadded."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def parse_json(path: str, data: bytes | None) -> Any:
    if not data:
        raise ZNodeDecodeError(path, "has no data")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ZNodeDecodeError(path, f"not valid JSON ({exc})") from None


class JsonFields:
    """Typed, strict access to the fields of one JSON object stored at ``path``."""

    def __init__(self, path: str, document: Any, where: str = "") -> None:
        if not isinstance(document, dict):
            raise ZNodeDecodeError(path, f"{where or 'data'} is not a JSON object")
        self.path = path
        self._document = document
        self._where = where

    @classmethod
    def parse(cls, path: str, data: bytes | None) -> JsonFields:
        return cls(path, parse_json(path, data))

    def fail(self, key: str, reason: str) -> ZNodeDecodeError:
        return ZNodeDecodeError(self.path, f"field '{self._where}{key}' {reason}")

    def has(self, key: str) -> bool:
        return key in self._document and self._document[key] is not None

    def raw(self, key: str) -> Any:
        if key not in self._document:
            raise self.fail(key, "is missing")
        return self._document[key]

    def integer(self, key: str, *, minimum: int = INT32_MIN, maximum: int = INT32_MAX) -> int:
        return self._check_int(key, self.raw(key), minimum, maximum)

    def long_text(self, key: str, *, minimum: int = INT64_MIN, maximum: int = INT64_MAX) -> int:
        """A 64-bit integer written as a decimal string (``"timestamp":"1700000000000"``)."""
        value = self.text(key)
        if not value.lstrip("-").isdigit() or value.startswith("+"):
            raise self.fail(key, f"is {value!r}, not a decimal integer")
        number = int(value)
        if not minimum <= number <= maximum:
            raise self.fail(key, f"is {number}, outside {minimum}..{maximum}")
        return number

    def text(self, key: str) -> str:
        value = self.raw(key)
        if not isinstance(value, str):
            raise self.fail(key, f"is {value!r}, not a string")
        return value

    def optional_text(self, key: str) -> str | None:
        return self.text(key) if self.has(key) else None

    def integers(self, key: str) -> tuple[int, ...]:
        return self.integers_of(key, self.raw(key))

    def integers_of(self, key: str, value: Any) -> tuple[int, ...]:
        if not isinstance(value, list):
            raise self.fail(key, f"is {value!r}, not a list of integers")
        return tuple(self._check_int(key, item, INT32_MIN, INT32_MAX) for item in value)

    def child(self, key: str) -> JsonFields:
        return JsonFields(self.path, self.raw(key), where=f"{self._where}{key}.")

    def children(self, key: str) -> list[JsonFields]:
        value = self.raw(key)
        if not isinstance(value, list):
            raise self.fail(key, f"is {value!r}, not a list")
        return [JsonFields(self.path, item, where=f"{self._where}{key}[{i}].") for i, item in enumerate(value)]

    def text_map(self, key: str) -> dict[str, str]:
        fields = self.child(key)
        for name in fields.keys():
            fields.text(name)
        return dict(fields._document)

    def keys(self) -> list[str]:
        return list(self._document)

    def version(self, *, minimum: int = 1) -> int:
        """The ``version`` field: an integer no lower than ``minimum`` (newer versions add fields)."""
        return self.integer("version", minimum=minimum)

    def kafka_uuid(self, key: str) -> uuid.UUID:
        text = self.text(key)
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except (binascii.Error, ValueError):
            raise self.fail(key, f"is {text!r}, not base64") from None
        if len(raw) != 16 or len(text) != 22:
            raise self.fail(key, f"is {text!r}, not a 16-byte id in 22 base64 characters")
        return uuid.UUID(bytes=raw)

    def _check_int(self, key: str, value: Any, minimum: int, maximum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"is {value!r}, not an integer")
        if not minimum <= value <= maximum:
            raise self.fail(key, f"is {value}, outside {minimum}..{maximum}")
        return value


def decode_int_text(path: str, data: bytes | None) -> int:
    """A znode holding a bare decimal integer (``/controller_epoch``)."""
    try:
        text = (data or b"").decode("ascii").strip()
    except UnicodeDecodeError:
        text = repr(data)
    if not text.lstrip("-").isdigit():
        raise ZNodeDecodeError(path, f"holds {text!r}, not a decimal integer")
    value = int(text)
    if not INT32_MIN <= value <= INT32_MAX:
        raise ZNodeDecodeError(path, f"holds {value}, outside the 32-bit range")
    return value
