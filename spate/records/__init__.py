"""RecordBatch v2: the unit Spate stores on disk and sends on the wire.

Pure code (no files, sockets or clocks). ``batch`` validates and stamps
headers without decoding records; ``builder`` and ``reader`` turn records into
batches and back; ``compression`` and ``control`` hold the codecs and the
transaction markers; ``legacy`` reads the message sets of magic 0 and 1 and
converts them to and from v2 for old clients. Malformed data of every kind
raises ``CorruptRecordError``.
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
from spate.records.legacy import (
    MAGIC_V0,
    MAGIC_V1,
    LegacyMessage,
    UnsupportedDownConversion,
    downconvert,
    entry_magic,
    read_message_set,
    upconvert,
)
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
    "MAGIC_V0",
    "MAGIC_V1",
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
    "LegacyMessage",
    "Record",
    "RecordColumns",
    "TimestampType",
    "UnsupportedDownConversion",
    "batch_crc",
    "build_batch",
    "build_control_batch",
    "compress",
    "decode_batch",
    "decode_batch_columns",
    "decompress",
    "downconvert",
    "entry_magic",
    "iter_batches",
    "iter_decoded_batches",
    "iter_records",
    "parse_control_record",
    "parse_header",
    "peek_offset_and_length",
    "read_message_set",
    "set_log_append_time",
    "stamp_base_offset",
    "stamp_partition_leader_epoch",
    "upconvert",
    "validate_batch",
]
