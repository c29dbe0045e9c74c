"""The legacy message formats at the edge: Produce v0-2 and Fetch v0-3.

The log holds RecordBatch v2 only, as Kafka 3.x writes it. Produce requests
before v3 carry message sets of magic 0 (v0-1) or magic 1 (v2), which are
up-converted to one v2 batch before validation; a v2 batch in such a request
is taken as it is, as Kafka takes it. Fetch requests before v4 read message
sets: the batches read are down-converted to magic 0 (v0-1) or magic 1
(v2-3), dropping transaction markers and record headers, which those formats
cannot carry. ZSTD batches cannot be down-converted
(UNSUPPORTED_COMPRESSION_TYPE, as Kafka answers), and a topic with
``message.downconversion.enable=false`` answers such fetches
UNSUPPORTED_VERSION.
"""

from __future__ import annotations

from typing import Any

from spate.protocol.errors import ErrorCode, KafkaError
from spate.records import legacy
from spate.records.batch import MAGIC_V2

FIRST_PRODUCE_VERSION_WITH_BATCHES = 3
FIRST_FETCH_VERSION_WITH_BATCHES = 4
FIRST_FETCH_VERSION_WITH_MAGIC_1 = 2


def produced_records(records: Any, api_version: int) -> Any:
    """The records of a Produce request as v2 batches the log can validate."""
    if api_version >= FIRST_PRODUCE_VERSION_WITH_BATCHES or len(records) == 0:
        return records
    if legacy.entry_magic(records) >= MAGIC_V2:
        return records
    return legacy.upconvert(records)


def needs_down_conversion(api_version: int) -> bool:
    return api_version < FIRST_FETCH_VERSION_WITH_BATCHES


def fetch_magic(api_version: int) -> int:
    return legacy.MAGIC_V1 if api_version >= FIRST_FETCH_VERSION_WITH_MAGIC_1 else legacy.MAGIC_V0


def down_converted(
    batches: bytes, api_version: int, max_bytes: int, first_offset: int, *, enabled: bool, where: str
) -> bytes:
    """``batches`` (whole v2 batches read from the log) as a message set the fetcher's version reads."""
    if not enabled:
        raise KafkaError(
            ErrorCode.UNSUPPORTED_VERSION,
            f"{where}: Fetch v{api_version} needs records down-converted, which message.downconversion.enable=false "
            "turns off",
        )
    try:
        return legacy.downconvert(batches, fetch_magic(api_version), max_bytes=max_bytes, first_offset=first_offset)
    except legacy.UnsupportedDownConversion as exc:
        raise KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, f"{where}: {exc}") from exc
