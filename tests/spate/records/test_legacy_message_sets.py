"""Legacy message sets (magic 0 and 1): reading them, and up-converting them to RecordBatch v2.

Messages are written by hand from the documented layout (``legacy_messages``);
``test_legacy_oracles`` checks the same against kafka-python.
"""

from __future__ import annotations

import random
import struct
import zlib

import cramjam
import lz4.frame
import pytest

from spate.records import (
    MAGIC_V0,
    MAGIC_V1,
    Compression,
    CorruptRecordError,
    LegacyMessage,
    build_batch,
    decode_batch,
    downconvert,
    entry_magic,
    iter_batches,
    read_message_set,
    upconvert,
)
from spate.records.compression import XERIAL_MAGIC
from spate.records.legacy_compression import lz4_header_checksum_position, xxh32
from tests.spate.records.legacy_messages import (
    APPEND,
    APPEND_TIME,
    CREATE,
    LEGACY_CODECS,
    MAGICS,
    RECORDS,
    as_tuples,
    expected_tuples,
    flipped,
    message,
    wrapper,
)

# --- entry_magic ------------------------------------------------------------------------------


def test_entry_magic_reads_byte_16_of_legacy_entries_and_v2_batches():
    assert entry_magic(message(0, b"v", magic=MAGIC_V0)) == 0
    assert entry_magic(message(0, b"v", magic=MAGIC_V1)) == 1
    assert entry_magic(build_batch(RECORDS[:1], base_offset=100)) == 2
    second = message(0, b"v", magic=MAGIC_V0) + message(1, b"v", magic=MAGIC_V1)
    assert entry_magic(second, len(message(0, b"v", magic=MAGIC_V0))) == 1


def test_entry_magic_of_too_few_bytes_is_corrupt():
    with pytest.raises(CorruptRecordError, match="before its magic byte"):
        entry_magic(message(0, b"v")[:16])


# --- read_message_set -------------------------------------------------------------------------


def test_plain_messages_keep_their_offsets_timestamps_keys_and_values():
    data = (
        message(5, b"a", key=b"k", timestamp=10)
        + message(9, None, key=None, timestamp=20, attributes=0x08)
        + message(7, b"", key=b"", magic=MAGIC_V0)
    )
    assert read_message_set(data) == [
        LegacyMessage(5, 10, CREATE, b"k", b"a", MAGIC_V1),
        LegacyMessage(9, 20, APPEND, None, None, MAGIC_V1),
        LegacyMessage(7, -1, CREATE, b"", b"", MAGIC_V0),
    ]


def test_an_empty_message_set_holds_no_messages():
    assert read_message_set(b"") == []
    assert upconvert(b"") == b""


@pytest.mark.parametrize("codec", LEGACY_CODECS[1:], ids=lambda c: c.name)
def test_magic_1_inner_offsets_are_relative_to_the_wrapper_offset_of_the_last_message(codec):
    inner = message(0, b"a", timestamp=1) + message(1, b"b", timestamp=2) + message(2, b"c", timestamp=3)
    messages = read_message_set(wrapper(42, inner, codec=codec, timestamp=3))
    assert as_tuples(messages) == [(40, 1, None, b"a"), (41, 2, None, b"b"), (42, 3, None, b"c")]
    assert {m.compression for m in messages} == {codec}


def test_magic_1_wrapper_offset_zero_leaves_inner_offsets_as_written():
    # Some librdkafka versions write produce data this way.
    inner = message(0, b"a") + message(1, b"b")
    assert [m.offset for m in read_message_set(wrapper(0, inner))] == [0, 1]


def test_magic_1_wrapper_offset_below_its_last_inner_offset_is_corrupt():
    inner = message(0, b"a") + message(5, b"b")
    with pytest.raises(CorruptRecordError, match="below its last inner offset"):
        read_message_set(wrapper(3, inner))


def test_magic_0_inner_offsets_are_absolute():
    inner = message(70, b"a", magic=MAGIC_V0) + message(71, b"b", magic=MAGIC_V0)
    messages = read_message_set(wrapper(71, inner, magic=MAGIC_V0))
    assert [(m.offset, m.timestamp, m.magic) for m in messages] == [(70, -1, 0), (71, -1, 0)]


def test_magic_1_log_append_time_wrapper_gives_its_timestamp_to_every_inner_message():
    inner = message(0, b"a", timestamp=1) + message(1, b"b", timestamp=2)
    messages = read_message_set(wrapper(1, inner, attributes=0x08, timestamp=APPEND_TIME))
    assert [(m.timestamp, m.timestamp_type) for m in messages] == [(APPEND_TIME, APPEND)] * 2


def test_magic_1_create_time_wrapper_keeps_the_inner_timestamps():
    inner = message(0, b"a", timestamp=1) + message(1, b"b", timestamp=2)
    messages = read_message_set(wrapper(1, inner, timestamp=2))
    assert [(m.timestamp, m.timestamp_type) for m in messages] == [(1, CREATE), (2, CREATE)]


def test_the_timestamp_type_bit_means_nothing_under_magic_0():
    (only,) = read_message_set(message(0, b"a", magic=MAGIC_V0, attributes=0x08))
    assert (only.timestamp, only.timestamp_type) == (-1, CREATE)


def test_snappy_is_read_in_xerial_framing_as_well_as_raw():
    inner = message(0, b"a" * 100) + message(1, b"b" * 100)
    xerial = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    for start in range(0, len(inner), 50):
        block = bytes(cramjam.snappy.compress_raw(inner[start : start + 50]))
        xerial += struct.pack(">i", len(block)) + block
    framed = message(1, xerial, attributes=Compression.SNAPPY)
    assert as_tuples(read_message_set(framed)) == as_tuples(
        read_message_set(wrapper(1, inner, codec=Compression.SNAPPY))
    )


@pytest.mark.parametrize("magic", MAGICS)
def test_lz4_is_read_whatever_its_frame_header_checksum(magic):
    inner = message(0, b"a" * 100, magic=magic) + message(1, b"b", magic=magic)
    frame = bytearray(lz4.frame.compress(inner))
    position = lz4_header_checksum_position(bytes(frame))
    for checksum in ((xxh32(frame[4:position]) >> 8) & 0xFF, (xxh32(frame[:position]) >> 8) & 0xFF, 0):
        frame[position] = checksum
        data = message(1, bytes(frame), magic=magic, attributes=Compression.LZ4)
        assert [m.value for m in read_message_set(data)] == [b"a" * 100, b"b"]


# --- corrupt input ----------------------------------------------------------------------------

GOOD = message(0, b"first") + message(1, b"second", key=b"k")
SECOND = len(message(0, b"first"))


@pytest.mark.parametrize(
    ("data", "complaint"),
    [
        (flipped(GOOD, SECOND + 30), f"message at position {SECOND} fails its CRC"),
        (GOOD[:-1], f"message at position {SECOND} is truncated"),
        (GOOD + GOOD[:11], f"message at position {len(GOOD)} is truncated"),
        (GOOD[:SECOND] + struct.pack(">qi", 1, 13) + bytes(20), "declares size 13, under 14"),
        (struct.pack(">qiIbb", 0, 20, 0, 1, 0) + bytes(14), "declares size 20, under 22 for magic 1"),
        (message(0, b"v", magic=2), "has magic 2, expected 0 or 1"),
        (message(0, b"v", magic=-1), "has magic -1, expected 0 or 1"),
        (message(0, b"v", attributes=5), "compression codec 5 does not exist for magic 1"),
        (message(0, b"v", magic=MAGIC_V0, attributes=Compression.ZSTD), "codec 4 does not exist for magic 0"),
        (message(0, None, attributes=Compression.GZIP), "compressed message at position 0 has a null value"),
        (message(0, b"not gzip", attributes=Compression.GZIP), "gzip records are corrupt"),
        (message(0, b"\x00" * 3, attributes=Compression.LZ4), "lz4 records"),
    ],
    ids=[
        "crc", "truncated-last", "partial-trailing-header", "size-under-overhead", "magic-1-size-under-overhead",
        "magic-2", "negative-magic", "unknown-codec", "zstd-under-magic-0", "wrapper-null-value", "bad-gzip", "bad-lz4",
    ],
)  # fmt: skip
def test_malformed_message_sets_are_corrupt_and_say_where(data, complaint):
    with pytest.raises(CorruptRecordError, match=complaint):
        read_message_set(data)


def test_key_and_value_lengths_must_fill_the_message_exactly():
    body = struct.pack(">bbqi", 1, 0, 0, 100) + b"short" + struct.pack(">i", -1)
    overlong_key = struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body
    with pytest.raises(CorruptRecordError, match="key of length 100 does not fit"):
        read_message_set(overlong_key)
    body = struct.pack(">bbqii", 1, 0, 0, -1, -1) + b"extra"
    trailing = struct.pack(">qiI", 0, len(body) + 4, zlib.crc32(body)) + body
    with pytest.raises(CorruptRecordError, match="5 bytes after its value"):
        read_message_set(trailing)


def test_a_wrapper_inside_a_wrapper_is_refused():
    nested = wrapper(0, message(0, b"deep"))
    with pytest.raises(CorruptRecordError, match="wrappers do not nest"):
        read_message_set(wrapper(0, nested))


def test_inner_messages_must_have_the_wrappers_magic():
    with pytest.raises(CorruptRecordError, match="magic 0 message in a magic 1 wrapper"):
        read_message_set(wrapper(0, message(0, b"v", magic=MAGIC_V0)))


def test_a_wrapper_holding_no_messages_is_corrupt():
    with pytest.raises(CorruptRecordError, match="holds no messages"):
        read_message_set(wrapper(0, b""))


def test_a_corrupt_inner_message_names_the_wrapper_that_holds_it():
    inner = message(0, b"a") + flipped(message(1, b"b"), 25)
    with pytest.raises(
        CorruptRecordError, match=r"inner message at position \d+ of the compressed message at position 0"
    ):
        read_message_set(wrapper(1, inner))


@pytest.mark.parametrize("codec", LEGACY_CODECS[1:], ids=lambda c: c.name)
def test_wrappers_may_decompress_to_at_most_the_limit_in_total(codec):
    inner = message(0, b"z" * 5000)
    one = wrapper(0, inner, codec=codec)
    assert len(read_message_set(one + one, max_decompressed_size=2 * len(inner))) == 2
    with pytest.raises(CorruptRecordError, match="past the limit"):
        read_message_set(one + one, max_decompressed_size=2 * len(inner) - 1)


def test_random_damage_either_reads_or_raises_corrupt_record_error():
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    samples = [
        downconvert(build_batch(RECORDS, base_offset=100, compression=c), m) for c in LEGACY_CODECS for m in MAGICS
    ]
    for _ in range(300):
        data = bytearray(rng.choice(samples))
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        cut = rng.choice([len(data), rng.randrange(len(data) + 1)])
        try:
            read_message_set(bytes(data[:cut]), max_decompressed_size=1 << 20)
        except CorruptRecordError:
            pass
        except Exception as exc:
            pytest.fail(f"seed {seed}: {type(exc).__name__}: {exc}")


# --- upconvert --------------------------------------------------------------------------------


@pytest.mark.parametrize("magic", MAGICS)
@pytest.mark.parametrize("codec", LEGACY_CODECS, ids=lambda c: c.name)
def test_upconvert_makes_one_create_time_batch_at_offsets_from_zero(codec, magic):
    legacy = downconvert(build_batch(RECORDS, base_offset=100, compression=codec), magic)
    batch = upconvert(legacy)
    (header,) = iter_batches(batch)
    decoded = decode_batch(batch)
    assert header.compression == codec
    assert (header.base_offset, header.last_offset_delta, header.records_count) == (0, 4, 5)
    assert not header.is_log_append_time and not header.has_producer_id and not header.is_transactional
    expected = [(i, ts, key, value) for i, (_, ts, key, value) in enumerate(expected_tuples(magic))]
    assert [(r.offset, r.timestamp, r.key, r.value) for r in decoded.records] == expected
    assert all(r.headers == () for r in decoded.records)


def test_upconvert_keeps_the_order_of_plain_and_wrapped_messages_and_takes_the_first_wrappers_codec():
    data = (
        message(0, b"plain-1", timestamp=1)
        + wrapper(
            2, message(0, b"snappy-1", timestamp=2) + message(1, b"snappy-2", timestamp=3), codec=Compression.SNAPPY
        )
        + wrapper(3, message(3, b"gzip-1", timestamp=4), codec=Compression.GZIP)
        + message(9, b"plain-2", timestamp=5)
    )
    decoded = decode_batch(upconvert(data))
    assert decoded.header.compression == Compression.SNAPPY
    assert [(r.offset, r.timestamp, r.value) for r in decoded.records] == [
        (0, 1, b"plain-1"), (1, 2, b"snappy-1"), (2, 3, b"snappy-2"), (3, 4, b"gzip-1"), (4, 5, b"plain-2"),
    ]  # fmt: skip


def test_upconvert_keeps_a_producers_log_append_time_claim_for_the_broker_to_refuse():
    data = wrapper(1, message(0, b"a", timestamp=7) + message(1, b"b", timestamp=7), attributes=0x08, timestamp=9)
    header = decode_batch(upconvert(data)).header
    assert header.is_log_append_time and header.max_timestamp == 9


def test_upconvert_refuses_corrupt_message_sets():
    with pytest.raises(CorruptRecordError, match="fails its CRC"):
        upconvert(flipped(GOOD, 20))
