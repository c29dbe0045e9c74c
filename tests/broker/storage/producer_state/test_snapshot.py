"""Snapshot files' byte layout, both ways, and damaged files (producer_state/snapshot.py)."""

from __future__ import annotations

import pytest
from crc32c import crc32c

from broker_core.storage.producer_state import (
    SNAPSHOT_VERSION,
    BatchMetadata,
    CorruptSnapshotError,
    ProducerStateEntry,
    decode_snapshot,
    encode_snapshot,
)
from tests.broker.storage.producer_state.harness import populate


def test_snapshot_file_layout_starts_with_version_crc_and_count(h):
    populate(h)
    data = h.state.take_snapshot(h.log_end).read_bytes()
    assert int.from_bytes(data[0:2], "big") == SNAPSHOT_VERSION
    assert int.from_bytes(data[6:10], "big") == 3
    # 10-byte header, 31 bytes per producer, 32 per retained batch (5 + 1 + 1).
    assert len(data) == 10 + 3 * 31 + 7 * 32


# Everything after the CRC field of a one-producer snapshot.
SNAPSHOT_BODY = bytes.fromhex(
    "00000001"                                     # one entry
    "0000000000000007" "0002" "00000005"           # producer 7, epoch 2, coordinator epoch 5
    "00000000000003e8" "0000000000000064" "01"     # last timestamp 1000, txn open at 100, 1 batch
    "0000000a" "0000000c"                          # sequences 10..12
    "0000000000000064" "0000000000000066"          # offsets 100..102
    "00000000000003e8"                             # timestamp 1000
)


def test_snapshot_encoding_matches_the_documented_byte_layout_both_ways():
    data = b"\x00\x01" + crc32c(SNAPSHOT_BODY).to_bytes(4, "big") + SNAPSHOT_BODY
    entry = ProducerStateEntry(
        producer_id=7,
        producer_epoch=2,
        batches=(BatchMetadata(10, 12, 100, 102, 1000),),
        coordinator_epoch=5,
        current_txn_first_offset=100,
        last_timestamp=1000,
    )
    assert encode_snapshot([entry]) == data
    assert decode_snapshot(data) == [entry]


@pytest.mark.parametrize(
    "mutate, reason",
    [
        (lambda d: d[:5], "shorter than"),
        (lambda d: b"\x00\x09" + d[2:], "unknown version"),
        (lambda d: d[:6] + bytes([d[6] ^ 1]) + d[7:], "CRC mismatch"),
    ],
    ids=["truncated header", "unknown version", "bit flip"],
)
def test_decode_rejects_damaged_snapshots(mutate, reason):
    data = encode_snapshot([ProducerStateEntry(1, 0, (BatchMetadata(0, 0, 0, 0, 1),), last_timestamp=1)])
    with pytest.raises(CorruptSnapshotError, match=reason):
        decode_snapshot(mutate(data), source="x.snapshot")


def test_decode_rejects_a_crc_valid_file_with_a_bad_layout():
    good = encode_snapshot([ProducerStateEntry(1, 0, last_timestamp=1)])
    for body, reason in [(good[6:] + b"\x00", "trailing bytes"), (b"\x00\x00\x00\x02" + good[10:], "truncated")]:
        data = good[:2] + crc32c(body).to_bytes(4, "big") + body
        with pytest.raises(CorruptSnapshotError, match=reason):
            decode_snapshot(data)
