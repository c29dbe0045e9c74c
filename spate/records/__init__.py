"""RecordBatch v2: the unit Spate stores on disk and sends on the wire.

Pure code (no files, sockets or clocks). ``batch`` validates and stamps
headers without decoding records; ``builder`` and ``reader`` turn records into
batches and back; ``compression`` and ``control`` hold the codecs and the
transaction markers. Malformed data of every kind raises ``CorruptRecordError``.
"""

from spate.records.batch import (
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    BatchHeader,
    batch_crc,
    iter_batches,
    parse_header,
    peek_offset_and_length,
    stamp_base_offset,
    stamp_partition_leader_epoch,
    validate_batch,
)
from spate.records.builder import build_batch, set_log_append_time
from spate.records.compression import DEFAULT_MAX_DECOMPRESSED_SIZE, Compression, compress, decompress
from spate.records.control import ControlType, build_control_batch, parse_control_record
from spate.records.errors import CorruptRecordError
from spate.records.reader import (
    DecodedBatch,
    RecordColumns,
    decode_batch,
    decode_batch_columns,
    iter_decoded_batches,
    iter_records,
)
from spate.records.record import Record, TimestampType

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED_SIZE",
    "HEADER_SIZE",
    "LOG_OVERHEAD",
    "MAGIC_V2",
    "NO_PARTITION_LEADER_EPOCH",
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "NO_SEQUENCE",
    "NO_TIMESTAMP",
    "BatchHeader",
    "Compression",
    "ControlType",
    "CorruptRecordError",
    "DecodedBatch",
    "Record",
    "RecordColumns",
    "TimestampType",
    "batch_crc",
    "build_batch",
    "build_control_batch",
    "compress",
    "decode_batch",
    "decode_batch_columns",
    "decompress",
    "iter_batches",
    "iter_decoded_batches",
    "iter_records",
    "parse_control_record",
    "parse_header",
    "peek_offset_and_length",
    "set_log_append_time",
    "stamp_base_offset",
    "stamp_partition_leader_epoch",
    "validate_batch",
]
