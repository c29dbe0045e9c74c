"""The records of a batch as compaction needs them: offset, key, whether a
tombstone, timestamp, and where each record's bytes lie in the (decompressed)
records section, so kept records are copied as they are.

Only the record prefix up to the value length is decoded; headers and values
are skipped. Raises ``CorruptRecordError`` for records that do not frame.
"""

from __future__ import annotations

from dataclasses import dataclass

from spate.records.batch import BatchHeader
from spate.records.compression import DEFAULT_MAX_DECOMPRESSED_SIZE
from spate.records.errors import CorruptRecordError
from spate.records.reader import records_section
from spate.records.varint import decode_varint, decode_varlong


@dataclass(frozen=True, slots=True)
class ScannedRecord:
    offset: int
    timestamp: int
    key: bytes | None
    is_tombstone: bool
    start: int
    end: int


# A first guess at how far a batch decompresses: some codecs' decoders allocate the whole limit up front.
_FIRST_GUESS_RATIO = 16
_FIRST_GUESS_MIN = 1 << 20


def batch_records_section(buf: bytes | bytearray | memoryview, header: BatchHeader) -> bytes:
    """The decompressed records bytes of the batch at ``header.position`` of ``buf``."""
    if header.compression == 0:
        return records_section(buf, header, DEFAULT_MAX_DECOMPRESSED_SIZE)
    guess = min(max(header.size * _FIRST_GUESS_RATIO, _FIRST_GUESS_MIN), DEFAULT_MAX_DECOMPRESSED_SIZE)
    try:
        return records_section(buf, header, guess)
    except CorruptRecordError:
        if guess == DEFAULT_MAX_DECOMPRESSED_SIZE:
            raise
        return records_section(buf, header, DEFAULT_MAX_DECOMPRESSED_SIZE)


def scan_records(section: bytes, header: BatchHeader) -> list[ScannedRecord]:
    """Every record of ``section`` (the batch's decompressed records bytes), in order."""
    records: list[ScannedRecord] = []
    base_offset, base_timestamp = header.base_offset, header.base_timestamp
    append_time = header.max_timestamp if header.is_log_append_time else None
    end = len(section)
    pos = 0
    for _ in range(header.records_count):
        start = pos
        # Lengths and deltas nearly always take one byte: decoded inline, the rest by ``decode_varint``.
        byte = section[pos] if pos < end else 0x80
        if byte < 0x80:
            length, pos = (byte >> 1) ^ -(byte & 1), pos + 1
        else:
            length, pos = decode_varint(section, pos, end)
        record_end = pos + length
        if length < 6 or record_end > end:
            raise CorruptRecordError(f"record at {start} of batch {base_offset} declares length {length}")
        timestamp_delta, pos = decode_varlong(section, pos + 1, record_end)  # after the attributes byte
        byte = section[pos]
        if byte < 0x80:
            offset_delta, pos = (byte >> 1) ^ -(byte & 1), pos + 1
        else:
            offset_delta, pos = decode_varint(section, pos, record_end)
        byte = section[pos]
        if byte < 0x80:
            key_size, pos = (byte >> 1) ^ -(byte & 1), pos + 1
        else:
            key_size, pos = decode_varint(section, pos, record_end)
        key = None
        if key_size >= 0:
            key = section[pos : pos + key_size]
            pos += key_size
        # A null value (a tombstone) is the varint -1: the single byte 0x01.
        is_tombstone = pos < record_end and section[pos] == 0x01
        timestamp = append_time if append_time is not None else base_timestamp + timestamp_delta
        records.append(ScannedRecord(base_offset + offset_delta, timestamp, key, is_tombstone, start, record_end))
        pos = record_end
    if pos != end:
        raise CorruptRecordError(f"batch {base_offset} has {end - pos} bytes after its {header.records_count} records")
    return records
