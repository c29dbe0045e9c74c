"""Data messages: declared like requests, stored with their int16 version in front."""

from __future__ import annotations

import pytest

from spate.protocol.data_schema import data_message, read_version
from spate.protocol.declarations import Field
from spate.protocol.errors import ProtocolDecodeError
from spate.protocol.types import INT32, STRING

Sample = data_message(
    "Sample",
    versions=(0, 1),
    flexible_from=1,
    fields=[Field("name", STRING), Field("count", INT32, versions=(1, None), default=-1)],
)


def test_a_stored_message_is_its_version_then_its_body() -> None:
    assert Sample("ab", 5).to_version_prefixed_bytes(0) == b"\x00\x00" + b"\x00\x02ab"
    assert Sample("ab", 5).to_version_prefixed_bytes(1) == b"\x00\x01" + b"\x03ab" + (5).to_bytes(4, "big") + b"\x00"


@pytest.mark.parametrize("version", [0, 1])
def test_every_declared_version_reads_back(version: int) -> None:
    stored = Sample("ab", 5).to_version_prefixed_bytes(version)
    assert Sample.from_version_prefixed_bytes(stored) == Sample("ab", 5 if version else -1)
    assert read_version(stored)[0] == version


@pytest.mark.parametrize("data", [b"", b"\x00", b"\x00\x07\x00\x00", b"\x00\x00\x00\x02a", b"\x00\x00\x00\x01ab"])
def test_short_unknown_or_trailing_input_is_a_decode_error(data: bytes) -> None:
    with pytest.raises(ProtocolDecodeError):
        Sample.from_version_prefixed_bytes(data)
