"""The records of a batch as compaction needs them: offset, key, whether a
tombstone, timestamp, and where each record's bytes lie in the (decompressed)
records section, so kept records are copied as they are.

Only the record prefix up to the value length is decoded; headers and values
are skipped. Raises ``CorruptRecordError`` for records that do not frame.
"""

from __future__ import annotations

from typing import NamedTuple

from spate.records.batch import BatchHeader
from spate.records.compression import DEFAULT_MAX_DECOMPRESSED_SIZE
from spate.records.errors import CorruptRecordError
from spate.records.reader import records_section
from spate.records.varint import decode_varint, decode_varlong


class ScannedRecord(NamedTuple):  # a tuple: made for every record scanned, it must be cheap to build
    offset: int
    timestamp: int
    key: bytes | None
    is_tombstone: bool
    start: int
    end: int


# Builds a ScannedRecord from a tuple in C (its generated ``__new__`` is a Python function: a call per record).
_new_record = tuple.__new__

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
    append = records.append
    base_offset, base_timestamp = header.base_offset, header.base_timestamp
    append_time = header.max_timestamp if header.is_log_append_time else None
    end = len(section)
    pos = 0
    try:
        for _ in range(header.records_count):
            start = pos
            # Varints of one or two bytes (nearly all lengths and deltas) are decoded inline: a call per varint
            # would cost a third of the scan.
            byte = section[pos]
            if byte < 0x80:
                length, pos = (byte >> 1) ^ -(byte & 1), pos + 1
            elif section[pos + 1] < 0x80:
                raw = (byte & 0x7F) | (section[pos + 1] << 7)
                length, pos = (raw >> 1) ^ -(raw & 1), pos + 2
            else:
                length, pos = decode_varint(section, pos, end)
            record_end = pos + length
            if length < 6 or record_end > end:
                raise CorruptRecordError(f"record at {start} of batch {base_offset} declares length {length}")
            pos += 1  # attributes
            byte = section[pos]
            if byte < 0x80:
                timestamp_delta, pos = (byte >> 1) ^ -(byte & 1), pos + 1
            elif section[pos + 1] < 0x80:
                raw = (byte & 0x7F) | (section[pos + 1] << 7)
                timestamp_delta, pos = (raw >> 1) ^ -(raw & 1), pos + 2
            else:
                timestamp_delta, pos = decode_varlong(section, pos, record_end)
            byte = section[pos]
            if byte < 0x80:
                offset_delta, pos = (byte >> 1) ^ -(byte & 1), pos + 1
            elif section[pos + 1] < 0x80:
                raw = (byte & 0x7F) | (section[pos + 1] << 7)
                offset_delta, pos = (raw >> 1) ^ -(raw & 1), pos + 2
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
            timestamp = append_time if append_time is not None else base_timestamp + timestamp_delta
            # A null value (a tombstone) is the varint -1: the single byte 0x01.
            append(_new_record(ScannedRecord, (base_offset + offset_delta, timestamp, key,
                                               pos < record_end and section[pos] == 0x01, start, record_end)))
            pos = record_end
    except IndexError:
        raise CorruptRecordError(f"batch {base_offset} ends inside a record") from None
    if pos != end:
        raise CorruptRecordError(f"batch {base_offset} has {end - pos} bytes after its {header.records_count} records")
    return records


def scan_keys(section: bytes, header: BatchHeader, latest: dict[bytes, int], from_offset: int) -> None:
    """Record in ``latest`` the offset of each keyed record of ``section`` at or after ``from_offset`` (the
    planner's scan: no timestamps, nothing kept per record)."""
    base_offset = header.base_offset
    end = len(section)
    pos = 0
    try:
        for _ in range(header.records_count):
            byte = section[pos]
            if byte < 0x80:
                length, pos = (byte >> 1) ^ -(byte & 1), pos + 1
            elif section[pos + 1] < 0x80:
                raw = (byte & 0x7F) | (section[pos + 1] << 7)
                length, pos = (raw >> 1) ^ -(raw & 1), pos + 2
            else:
                length, pos = decode_varint(section, pos, end)
            record_end = pos + length
            if length < 6 or record_end > end:
                raise CorruptRecordError(f"a record of batch {base_offset} declares length {length}")
            pos += 1  # attributes
            while section[pos] & 0x80:  # the timestamp delta, skipped
                pos += 1
            byte = section[pos + 1]
            if byte < 0x80:
                offset_delta, pos = (byte >> 1) ^ -(byte & 1), pos + 2
            elif section[pos + 2] < 0x80:
                raw = (byte & 0x7F) | (section[pos + 2] << 7)
                offset_delta, pos = (raw >> 1) ^ -(raw & 1), pos + 3
            else:
                offset_delta, pos = decode_varint(section, pos + 1, record_end)
            byte = section[pos]
            if byte < 0x80:
                key_size, pos = (byte >> 1) ^ -(byte & 1), pos + 1
            else:
                key_size, pos = decode_varint(section, pos, record_end)
            if key_size >= 0 and base_offset + offset_delta >= from_offset:
                latest[section[pos : pos + key_size]] = base_offset + offset_delta
            pos = record_end
    except IndexError:
        raise CorruptRecordError(f"batch {base_offset} ends inside a record") from None
    if pos != end:
        raise CorruptRecordError(f"batch {base_offset} has {end - pos} bytes after its {header.records_count} records")
