"""Transaction markers: building, reading back, and rejecting malformed ones."""

from __future__ import annotations

import warnings

import pytest

from spate.records import (
    ControlType,
    CorruptRecordError,
    Record,
    build_control_batch,
    decode_batch,
    parse_control_record,
)

with warnings.catch_warnings():
    # kafka-python's protocol package uses deprecated importlib APIs at import.
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatch


def marker(control_type=ControlType.COMMIT, **overrides) -> bytes:
    arguments = dict(
        producer_id=4242, producer_epoch=3, coordinator_epoch=17, timestamp=1_700_000_000_000, base_offset=99
    )
    arguments.update(overrides)
    return build_control_batch(
        control_type,
        arguments.pop("producer_id"),
        arguments.pop("producer_epoch"),
        arguments.pop("coordinator_epoch"),
        **arguments,
    )


@pytest.mark.parametrize("control_type", list(ControlType), ids=lambda t: t.name)
def test_control_batch_round_trips(control_type):
    decoded = decode_batch(marker(control_type, partition_leader_epoch=6))
    header = decoded.header
    assert header.is_control and header.is_transactional
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (4242, 3, -1)
    assert (header.base_offset, header.next_offset, header.records_count) == (99, 100, 1)
    assert header.partition_leader_epoch == 6
    assert header.max_timestamp == 1_700_000_000_000
    (record,) = decoded.records
    assert record.offset == 99
    assert parse_control_record(record) == (control_type, 17)


def test_control_record_key_and_value_have_the_documented_bytes():
    (record,) = decode_batch(marker(ControlType.COMMIT)).records
    assert record.key == bytes.fromhex("0000" "0001")
    assert record.value == bytes.fromhex("0000" "00000011")
    assert record.headers == ()


@pytest.mark.parametrize("control_type", list(ControlType), ids=lambda t: t.name)
def test_kafka_python_reads_our_marker_as_a_control_record(control_type):
    batch = DefaultRecordBatch(marker(control_type))
    assert batch.validate_crc()
    assert batch.is_control_batch and batch.is_transactional
    (record,) = list(batch)
    assert record.type == control_type
    assert record.version == 0


def test_later_key_and_value_versions_with_extra_bytes_are_accepted():
    record = Record(offset=0, timestamp=0, key=bytes.fromhex("0001" "0000" "ff"), value=bytes.fromhex("0002" "00000005" "ffff"))
    assert parse_control_record(record) == (ControlType.ABORT, 5)


@pytest.mark.parametrize(
    "key, value, message",
    [
        (None, bytes.fromhex("0000" "00000001"), "short key"),
        (bytes.fromhex("000000"), bytes.fromhex("0000" "00000001"), "short key"),
        (bytes.fromhex("ffff" "0001"), bytes.fromhex("0000" "00000001"), "key version -1"),
        (bytes.fromhex("0000" "0002"), bytes.fromhex("0000" "00000001"), "unknown control type 2"),
        (bytes.fromhex("0000" "0001"), None, "short value"),
        (bytes.fromhex("0000" "0001"), bytes.fromhex("0000" "0000"), "short value"),
        (bytes.fromhex("0000" "0001"), bytes.fromhex("ffff" "00000001"), "value version -1"),
    ],
    ids=["null-key", "short-key", "negative-key-version", "unknown-type", "null-value", "short-value", "negative-value-version"],
)
def test_malformed_control_records_are_corrupt(key, value, message):
    with pytest.raises(CorruptRecordError, match=message):
        parse_control_record(Record(offset=0, timestamp=0, key=key, value=value))
