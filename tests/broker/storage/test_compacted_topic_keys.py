"""A client's batch for a compacted topic must give every record a key (Kafka's LogValidator rule)."""

from __future__ import annotations

import pytest

from broker_core.storage.config import LogConfig
from broker_core.storage.errors import InvalidRecordsError
from broker_core.storage.log_validator import COMPACTED_WITHOUT_KEY, validate_append
from spate.records import Compression, Record, build_batch

COMPACTED = LogConfig(cleanup_policy="compact")


def _batch(keys: list[bytes | None], compression: Compression = Compression.NONE) -> bytes:
    return build_batch([Record(i, 1000 + i, key, b"v") for i, key in enumerate(keys)], compression=compression)


@pytest.mark.parametrize("compression", [Compression.NONE, Compression.GZIP])
def test_keyless_records_are_named_by_their_index_in_the_batch(compression: Compression) -> None:
    batch = _batch([None, b"k1", b"k2", None], compression)
    with pytest.raises(InvalidRecordsError) as refused:
        validate_append(batch, COMPACTED, next_offset=0, assign_offsets=True, now_ms=0, allow_control=False)
    assert refused.value.record_errors == ((0, COMPACTED_WITHOUT_KEY), (3, COMPACTED_WITHOUT_KEY))
    assert refused.value.error_code == 87  # INVALID_RECORD


def test_keyed_records_are_accepted() -> None:
    validated = validate_append(_batch([b"a", b"b"]), COMPACTED, next_offset=5, assign_offsets=True, now_ms=0,
                                allow_control=False)
    assert validated.headers[0].base_offset == 5


def test_keyless_records_are_fine_for_a_delete_topic_and_for_the_brokers_own_appends() -> None:
    batch = _batch([None])
    validate_append(batch, LogConfig(cleanup_policy="delete"), next_offset=0, assign_offsets=True, now_ms=0,
                    allow_control=False)
    validate_append(batch, COMPACTED, next_offset=0, assign_offsets=False, now_ms=0)  # replication
