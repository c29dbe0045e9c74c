"""ControlledShutdown (API key 7): hand-built frames and the broker epoch's default."""

from __future__ import annotations

import pytest

from spate.protocol.errors import ProtocolUsageError
from spate.protocol.messages.controlled_shutdown import ControlledShutdownRequest, ControlledShutdownResponse
from tests.spate.protocol.wire_hex import TAGS, arr, carr, cs, i16, i32, i64, s

VERSIONS = range(4)
Remaining = ControlledShutdownResponse.RemainingPartition


def request(version: int) -> ControlledShutdownRequest:
    return ControlledShutdownRequest(broker_id=2, broker_epoch=2**32 + 40 if version >= 2 else -1)


def response(version: int) -> ControlledShutdownResponse:
    """Leadership could not move yet for two partitions (no other replica in sync)."""
    return ControlledShutdownResponse(error_code=0, remaining_partitions=[Remaining("orders", 0), Remaining("logs", 3)])


@pytest.mark.parametrize("version", VERSIONS)
def test_realistic_messages_round_trip(version: int) -> None:
    for value in (request(version), response(version)):
        assert type(value).decode(value.encode(version), version) == value


GOLDEN = [
    pytest.param(ControlledShutdownRequest, 1, ControlledShutdownRequest(broker_id=2), i32(2), id="request-v1"),
    pytest.param(ControlledShutdownRequest, 2, ControlledShutdownRequest(2, 40), i32(2) + i64(40), id="request-v2"),
    pytest.param(ControlledShutdownRequest, 3, ControlledShutdownRequest(2, 40), i32(2) + i64(40) + TAGS,
                 id="request-v3-flexible"),
    pytest.param(
        ControlledShutdownResponse, 2, ControlledShutdownResponse(0, [Remaining("t", 3)]),
        # error_code, remaining_partitions [topic_name, partition_index]
        i16(0) + arr(1) + s("t") + i32(3),
        id="response-v2",
    ),
    pytest.param(
        ControlledShutdownResponse, 3, ControlledShutdownResponse(0, [Remaining("t", 3)]),
        # error_code, remaining_partitions compact [topic_name, partition_index, tags], tags
        i16(0) + carr(1) + cs("t") + i32(3) + TAGS + TAGS,
        id="response-v3-flexible",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), GOLDEN)
def test_encodes_to_the_documented_bytes(cls: type, version: int, value: object, hex_bytes: str) -> None:
    assert value.encode(version).hex() == hex_bytes  # type: ignore[attr-defined]


@pytest.mark.parametrize(("cls", "version", "value", "hex_bytes"), GOLDEN)
def test_decodes_from_the_documented_bytes(cls: type, version: int, value: object, hex_bytes: str) -> None:
    assert cls.decode(bytes.fromhex(hex_bytes), version) == value  # type: ignore[attr-defined]


@pytest.mark.parametrize("version", [0, 1])
def test_broker_epoch_is_unknown_before_v2(version: int) -> None:
    assert ControlledShutdownRequest.decode(request(3).encode(version), version).broker_epoch == -1


@pytest.mark.parametrize("version", VERSIONS)
def test_remaining_topic_names_are_not_nullable(version: int) -> None:
    with pytest.raises(ProtocolUsageError, match="topic_name"):
        ControlledShutdownResponse(remaining_partitions=[Remaining(None, 0)]).encode(version)  # type: ignore[arg-type]
