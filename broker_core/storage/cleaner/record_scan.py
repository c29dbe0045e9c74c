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


def batch_records_section(buf: bytes | bytearray | memoryview, header: BatchHeader) -> bytes:
    """The decompressed records bytes of the batch at ``header.position`` of ``buf``."""
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
        length, pos = decode_varint(section, pos, end)
        record_end = pos + length
        if length < 6 or record_end > end:
            raise CorruptRecordError(f"record at {start} of batch {base_offset} declares length {length}")
        pos += 1  # attributes
        timestamp_delta, pos = decode_varlong(section, pos, record_end)
        offset_delta, pos = decode_varint(section, pos, record_end)
        key_size, pos = decode_varint(section, pos, record_end)
        key = None
        if key_size >= 0:
            key = section[pos : pos + key_size]
            pos += key_size
        value_size, pos = decode_varint(section, pos, record_end)
        timestamp = append_time if append_time is not None else base_timestamp + timestamp_delta
        records.append(ScannedRecord(base_offset + offset_delta, timestamp, key, value_size < 0, start, record_end))
        pos = record_end
    if pos != end:
        raise CorruptRecordError(f"batch {base_offset} has {end - pos} bytes after its {header.records_count} records")
    return records
