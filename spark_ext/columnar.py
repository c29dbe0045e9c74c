"""Decode a batch's records straight into columns: numpy offsets and timestamps, Arrow keys and values.

For readers that want whole columns (Spark's Arrow batches), not one Python
object per record. The record layout is the one in ``record.py``; the checks
are those of :func:`~spate.records.reader.decode_batch_columns`, so a
batch decodes here exactly when it decodes there, to the same values:

* the batch header, CRC and records count (``validate_batch``), the bounded
  decompression, and the count against the section's size;
* each record's length (at least the smallest body, inside the section),
  its varints (no overflow, none running past the record), key and value
  lengths (-1 for null, else inside the record), and fields that fill
  exactly the declared length;
* offset deltas strictly increasing from 0 up to ``lastOffsetDelta``, and
  no bytes after the last record.

The one difference is in the columns' range: an absolute offset or timestamp
outside int64 cannot be a column value and raises ``CorruptRecordError``.

How: one Python pass steps from record to record by their length prefixes,
collecting where each ends (runs of records of one size are checked at once).
Every field after that is read for all records at once with numpy, one varint
byte position per step. Keys and values are copied into Arrow binary arrays
without a ``bytes`` object per key or value: as rows of a strided view when
they all have one size, else through a binary-view array pointing into the
section, cast to plain binary.

Batches with record headers, and batches of fewer than ``vector_threshold``
records (where numpy's fixed cost per call outweighs the per-record decoder),
go through ``decode_batch_columns`` and are converted; that path is as strict
by construction. Needs pyarrow's ``binary_view`` type (pyarrow 16 or later).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from spate.records.batch import HEADER_SIZE, BatchHeader, validate_batch
from spate.records.compression import DEFAULT_MAX_DECOMPRESSED_SIZE, Compression
from spate.records.errors import CorruptRecordError
from spate.records.reader import RecordColumns, decode_batch_columns, records_section
from spate.records.record import MIN_RECORD_BODY_SIZE, Header, TimestampType
from spate.records.varint import INT64_MAX, INT64_MIN, MAX_VARINT_BYTES, MAX_VARLONG_BYTES, decode_varint

Buffer = bytes | bytearray | memoryview

# Below this many records a batch decodes faster through the per-record decoder.
DEFAULT_VECTOR_THRESHOLD = 128

# A length varint plus the smallest body (as in reader.py).
_MIN_RECORD_SIZE = 1 + MIN_RECORD_BODY_SIZE
# Zero bytes after the section, so reads of up to 12 bytes (a view's inline
# data, a varint's continuation) never fall off the end; the checks decide.
_PAD = 16
# The last byte a varint may have: 4 bits left for int32, 1 bit for int64.
_VARINT_LAST_BYTE_MAX = 0x0F
_VARLONG_LAST_BYTE_MAX = 0x01
# The record walk: records walked before the first check for a run of one size
# (at most _MAX_GAP between failed checks), and the records each check covers.
_FIRST_GAP = 3
_MAX_GAP = 1024
_FIRST_RUN_CHECK = 32
_MAX_RUN_CHECK = 1 << 16
# Arrow's binary view: values up to this long are stored inside the view.
_VIEW_INLINE = 12
# Arrow buffers are little-endian on every platform Spark runs on; words are read and written so.
_WORD = np.dtype("<u4")
_INLINE_RANGE = np.arange(_VIEW_INLINE)
_INLINE_RANGE.setflags(write=False)


@dataclass(frozen=True, slots=True)
class ColumnarBatch:
    """One batch's records as columns.

    ``offsets`` and ``timestamps`` (milliseconds; the batch's maxTimestamp on
    every row of a LogAppendTime batch) are int64 numpy arrays; ``keys`` and
    ``values`` are Arrow binary arrays with nulls. ``headers`` holds each
    record's headers when they were asked for and some record has any;
    otherwise it is None.
    """

    header: BatchHeader
    offsets: np.ndarray
    timestamps: np.ndarray
    keys: pa.BinaryArray
    values: pa.BinaryArray
    headers: list[tuple[Header, ...]] | None = None

    def __len__(self) -> int:
        return len(self.offsets)

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType(int(self.header.is_log_append_time))

    def slice(self, start: int, stop: int) -> ColumnarBatch:
        """Rows ``[start, stop)``, sharing memory with this batch."""
        return ColumnarBatch(
            self.header,
            self.offsets[start:stop],
            self.timestamps[start:stop],
            self.keys[start:stop],
            self.values[start:stop],
            None if self.headers is None else self.headers[start:stop],
        )


def decode_columnar(
    buf: Buffer,
    position: int = 0,
    *,
    include_headers: bool = False,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    check_crc: bool = True,
    vector_threshold: int = DEFAULT_VECTOR_THRESHOLD,
) -> ColumnarBatch:
    """Validate and decode the batch at ``position`` into columns.

    ``check_crc=False`` is for callers that already compared the CRC; the
    framing and record checks always run. Raises ``CorruptRecordError``.
    """
    header = validate_batch(buf, position, check_crc=check_crc)
    if header.records_count < max(vector_threshold, 1):
        columns = decode_batch_columns(buf, position, max_decompressed_size=max_decompressed_size, check_crc=False)
        return _from_lists(columns, include_headers)
    data, section = _records(buf, header, max_decompressed_size)
    count = header.records_count
    if count > len(data) // _MIN_RECORD_SIZE:
        raise CorruptRecordError(
            f"batch at position {position} declares {count} records "
            f"but its {len(data)}-byte records section cannot hold them"
        )
    ends = _record_ends(data, section, count, position)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1]
    # Reading the lengths again gives where each body starts; they must agree with the walk.
    lengths, body = _int32s(section, starts, ends, position, "record length")
    if not np.array_equal(body + lengths, ends):
        raise CorruptRecordError(f"batch at position {position}: record lengths do not chain")
    pos = body + 1  # attributes: no bits are defined for records
    timestamp_deltas, pos = _varints(
        section, pos, ends, MAX_VARLONG_BYTES, _VARLONG_LAST_BYTE_MAX, position, "timestamp delta"
    )
    offset_deltas, pos = _int32s(section, pos, ends, position, "offset delta")
    key_starts, key_lengths, pos = _field(section, pos, ends, position, "key")
    value_starts, value_lengths, pos = _field(section, pos, ends, position, "value")
    header_counts, pos = _int32s(section, pos, ends, position, "header count")
    if header_counts.any():
        # Headers vary in number and size per record: the per-record decoder reads them.
        columns = decode_batch_columns(buf, position, max_decompressed_size=max_decompressed_size, check_crc=False)
        return _from_lists(columns, include_headers)
    if not np.array_equal(pos, ends):
        index = int(np.flatnonzero(pos != ends)[0])
        raise CorruptRecordError(
            f"batch at position {position}: record {index}'s fields take {int(pos[index] - starts[index])} bytes, "
            f"not the {int(ends[index] - starts[index])} its length says"
        )
    _check_offset_deltas(offset_deltas, header, position)
    return ColumnarBatch(
        header,
        _offsets(header, offset_deltas, position),
        _timestamps(header, timestamp_deltas, count, position),
        _binary(section, key_starts, key_lengths),
        _binary(section, value_starts, value_lengths),
    )


def _records(buf: Buffer, header: BatchHeader, max_size: int) -> tuple[Buffer, np.ndarray]:
    """The records section, and a uint8 array over it with at least ``_PAD`` readable bytes after it.

    An uncompressed batch followed by enough bytes of ``buf`` (the next
    batches of a fetch) is read in place; otherwise the section is copied
    into a zero-padded array.
    """
    start = header.position + HEADER_SIZE
    end = header.position + header.size
    if header.compression == Compression.NONE and end + _PAD <= len(buf):
        return memoryview(buf)[start:end], np.frombuffer(buf, np.uint8, count=end - start + _PAD, offset=start)
    data = records_section(buf, header, max_size)
    section = np.zeros(len(data) + _PAD, np.uint8)
    section[: len(data)] = np.frombuffer(data, np.uint8)
    return data, section


def _record_ends(data: Buffer, section: np.ndarray, count: int, position: int) -> np.ndarray:
    """Where each of ``count`` records ends, stepping over their length prefixes.

    The one per-record Python loop, kept to a few operations: lengths under
    64 take one varint byte and under 8192 two (decoded inline), longer ones
    go to ``decode_varint``. Records often come in runs of one size (fixed-size
    keys and values): whenever the last three walked records share a size, the
    records after them are checked for that size all at once (``_same_size_run``,
    the same checks), first a few, then all the rest. Checks for a run are
    made less often while they keep failing, so varied sizes cost little;
    once a first check holds, the next one covers the rest of the batch.
    """
    end = len(data)
    pieces: list[np.ndarray] = []
    walked: list[int] = []
    pos = 0
    index = 0
    gap = _FIRST_GAP
    while index < count:
        append = walked.append
        stop = min(count, index + gap)
        for index in range(index, stop):
            if pos >= end:
                raise CorruptRecordError(f"batch at position {position} declares {count} records but holds {index}")
            byte = data[pos]
            if byte < 0x80:
                length = (byte >> 1) ^ -(byte & 1)
                pos += 1
            elif pos + 1 < end and data[pos + 1] < 0x80:
                unsigned = (byte & 0x7F) | (data[pos + 1] << 7)
                length = (unsigned >> 1) ^ -(unsigned & 1)
                pos += 2
            else:
                length, pos = decode_varint(data, pos, end)
            if length < MIN_RECORD_BODY_SIZE:
                raise CorruptRecordError(f"batch at position {position}: record {index} declares length {length}")
            pos += length
            append(pos)
        index = stop
        size = walked[-1] - walked[-2] if len(walked) >= 3 else 0
        if index == count or not size or walked[-2] - walked[-3] != size:
            gap = min(gap * 2, _MAX_GAP)
            continue
        pieces.append(np.array(walked, np.int64))
        walked = []
        step = _FIRST_RUN_CHECK
        while index < count:
            tried = min(step, count - index)
            taken = _same_size_run(section, pos, size, tried, end)
            if taken:
                pieces.append(pos + size * np.arange(1, taken + 1, dtype=np.int64))
                pos += size * taken
                index += taken
            if taken < tried:
                break
            # A run that held this long usually lasts: check the rest at once (argmin finds its end).
            step = _MAX_RUN_CHECK
        gap = _FIRST_GAP
    if pos > end:
        raise CorruptRecordError(
            f"batch at position {position}: the last record runs past the records section by {pos - end} bytes"
        )
    if pos != end:
        raise CorruptRecordError(f"batch at position {position} has {end - pos} bytes after its {count} records")
    pieces.append(np.array(walked, np.int64))
    return np.concatenate(pieces)


def _same_size_run(section: np.ndarray, pos: int, size: int, limit: int, end: int) -> int:
    """How many of the next ``limit`` records from ``pos`` are ``size`` bytes long, in a row.

    A record counts when its length varint takes one or two bytes, its length
    is a valid record length and it ends inside the section: what the walk
    checks, so a record taken here is one the walk would have taken.
    """
    count = min(limit, (end - pos) // size)
    if count <= 0:
        return 0
    starts = pos + size * np.arange(count, dtype=np.int64)
    first = section[starts].astype(np.int64)
    second = section[starts + 1].astype(np.int64)
    one_byte = first < 0x80
    unsigned = np.where(one_byte, first, (first & 0x7F) | (second << 7))
    length = unsigned >> 1
    fits = (
        ((unsigned & 1) == 0)
        & (one_byte | (second < 0x80))
        & (length >= MIN_RECORD_BODY_SIZE)
        & (np.where(one_byte, 1, 2) + length == size)
    )
    return count if fits.all() else int(fits.argmin())


def _varints(
    section: np.ndarray,
    pos: np.ndarray,
    limits: np.ndarray,
    max_bytes: int,
    last_byte_max: int,
    position: int,
    what: str,
) -> tuple[np.ndarray, np.ndarray]:
    """The zig-zag varint at each of ``pos``, none reaching its limit: ``(values, next positions)``.

    Checks as ``varint.decode_varint`` does: at most ``max_bytes`` bytes, the
    last of them at most ``last_byte_max``, all before the limit.
    """
    byte = section[pos]
    if byte.max() < 0x80:
        # Every one a single byte, as deltas, short lengths and counts mostly are.
        small = byte.astype(np.int64)
        following = pos + 1
        if (following > limits).any():
            raise CorruptRecordError(f"batch at position {position}: {what} varint runs past its record")
        return (small >> 1) ^ -(small & 1), following
    second = section[pos + 1]
    longer = byte >= 0x80
    if max_bytes > 2 and (second * longer).max() < 0x80:
        # None longer than two bytes (lengths under 8 KiB, deltas under 8192): no per-byte loop.
        unsigned2 = (byte & 0x7F).astype(np.int64) | ((second & 0x7F).astype(np.int64) << 7) * longer
        following = pos + 1 + longer
        if (following > limits).any():
            raise CorruptRecordError(f"batch at position {position}: {what} varint runs past its record")
        return (unsigned2 >> 1) ^ -(unsigned2 & 1), following
    unsigned = (byte & 0x7F).astype(np.uint64)
    size = np.ones(len(pos), np.int64)
    more = np.flatnonzero(byte & 0x80)
    shift = 7
    for step in range(1, max_bytes):
        if not more.size:
            break
        byte = section[pos[more] + step]
        if step == max_bytes - 1 and (byte > last_byte_max).any():
            raise CorruptRecordError(f"batch at position {position}: {what} varint overflow")
        unsigned[more] |= (byte & 0x7F).astype(np.uint64) << np.uint64(shift)
        size[more] += 1
        more = more[(byte & 0x80) != 0]
        shift += 7
    following = pos + size
    if (following > limits).any():
        raise CorruptRecordError(f"batch at position {position}: {what} varint runs past its record")
    values = (unsigned >> np.uint64(1)).view(np.int64) ^ -(unsigned & np.uint64(1)).view(np.int64)
    return values, following


def _int32s(
    section: np.ndarray, pos: np.ndarray, limits: np.ndarray, position: int, what: str
) -> tuple[np.ndarray, np.ndarray]:
    return _varints(section, pos, limits, MAX_VARINT_BYTES, _VARINT_LAST_BYTE_MAX, position, what)


def _field(
    section: np.ndarray, pos: np.ndarray, ends: np.ndarray, position: int, what: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A nullable length-prefixed byte field: ``(starts, lengths with -1 for null, next positions)``."""
    lengths, starts = _int32s(section, pos, ends, position, f"{what} length")
    if (lengths < -1).any():
        raise CorruptRecordError(f"batch at position {position}: negative {what} length {int(lengths.min())}")
    following = starts + np.maximum(lengths, 0)
    if (following > ends).any():
        raise CorruptRecordError(f"batch at position {position}: a {what} runs past its record")
    return starts, lengths, following


def _check_offset_deltas(deltas: np.ndarray, header: BatchHeader, position: int) -> None:
    if deltas[0] < 0 or (deltas[1:] <= deltas[:-1]).any() or deltas[-1] > header.last_offset_delta:
        raise CorruptRecordError(
            f"batch at position {position}: offset deltas do not increase strictly from 0 "
            f"to at most lastOffsetDelta {header.last_offset_delta}"
        )


def _offsets(header: BatchHeader, deltas: np.ndarray, position: int) -> np.ndarray:
    if header.last_offset > INT64_MAX:
        raise CorruptRecordError(f"batch at position {position}: last offset {header.last_offset} exceeds int64")
    return deltas + header.base_offset


def _timestamps(header: BatchHeader, deltas: np.ndarray, count: int, position: int) -> np.ndarray:
    if header.is_log_append_time:
        return np.full(count, header.max_timestamp, np.int64)
    base = header.base_timestamp
    if not (INT64_MIN <= base + int(deltas.min()) and base + int(deltas.max()) <= INT64_MAX):
        raise CorruptRecordError(f"batch at position {position}: a timestamp is outside int64")
    return deltas + base


def _binary(section: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> pa.BinaryArray:
    """Arrow binary values ``section[start:start + length]`` (null where the length is -1)."""
    nulls = lengths < 0
    null_count = int(nulls.sum())
    validity = pa.py_buffer(np.packbits(~nulls, bitorder="little")) if null_count else None
    sizes = np.maximum(lengths, 0)
    offsets = np.zeros(len(sizes) + 1, np.int32)
    np.cumsum(sizes, out=offsets[1:])
    present = starts[~nulls] if null_count else starts
    present_sizes = sizes[~nulls] if null_count else sizes
    if not present.size or (present_sizes == present_sizes[0]).all():
        # One size for all (fixed-size keys or values): copy them as rows of a table over the section.
        size = int(present_sizes[0]) if present.size else 0
        rows = np.lib.stride_tricks.as_strided(section, (len(section) - size + 1, size), (1, 1), writeable=False)
        data = rows[present]
        return pa.Array.from_buffers(
            pa.binary(), len(sizes), [validity, pa.py_buffer(offsets), pa.py_buffer(data)], null_count=null_count
        )
    return _binary_through_views(section, starts, sizes, validity, null_count)


def _binary_through_views(
    section: np.ndarray, starts: np.ndarray, sizes: np.ndarray, validity: pa.Buffer | None, null_count: int
) -> pa.BinaryArray:
    """Values of any sizes: binary-view structs over the padded section, cast to binary.

    Each view is 16 bytes: int32 length, then either the value itself when
    it fits in 12 bytes, zero-filled, or its first 4 bytes, buffer index 0
    and its offset. The cast copies each value once, in C++.
    """
    count = len(starts)
    head = section[starts[:, None] + _INLINE_RANGE]
    head[_INLINE_RANGE >= sizes[:, None]] = 0
    views = np.empty((count, 4), _WORD)
    views[:, 0] = sizes
    views[:, 1:] = head.view(_WORD)
    # Longer values keep their 4-byte prefix (already in place) and point into the section.
    outside = np.flatnonzero(sizes > _VIEW_INLINE)
    views[outside, 2] = 0
    views[outside, 3] = starts[outside]
    array = pa.Array.from_buffers(
        pa.binary_view(), count, [validity, pa.py_buffer(views), pa.py_buffer(section)], null_count=null_count
    )
    return array.cast(pa.binary())


def _from_lists(columns: RecordColumns, include_headers: bool) -> ColumnarBatch:
    headers = None
    if include_headers and any(columns.headers):
        headers = columns.headers
    try:
        offsets = np.array(columns.offsets, np.int64)
        timestamps = np.array(columns.timestamps, np.int64)
    except OverflowError:
        raise CorruptRecordError(
            f"batch at position {columns.header.position}: an offset or timestamp is outside int64"
        ) from None
    return ColumnarBatch(
        columns.header,
        offsets,
        timestamps,
        pa.array(columns.keys, pa.binary()),
        pa.array(columns.values, pa.binary()),
        headers,
    )
