"""Records bound for one partition, encoded as they arrive and sealed into one RecordBatch v2.

Appending encodes the record as it comes, behind 61 bytes reserved for the
header (the layout is in ``records/batch.py``): offset deltas count from 0
and timestamp deltas from the first record, so nothing has to be rewritten
later. A record's encoding is kept as its parts (varints, key, value) in a
list, and ``seal`` joins them once, when the batch stops taking records:
each key and value is copied once, and no growing buffer is reallocated
and copied over and over on the way to ``batch.size``. Sealing also
compresses the records section if a codec is set.
``encode`` then writes the header and the CRC-32C for the producer id, epoch
and base sequence the batch is sent with. Those are only known when the
sender drains the batch, and they change if the producer's identity is
reset, which is why they are not part of sealing; re-encoding costs one
header pack and one CRC pass, never a recompression.
"""

from __future__ import annotations

import struct
from concurrent.futures import Future, InvalidStateError
from typing import Any

from spate.client.producer.future_record_metadata import DeliveryCallback, ProduceResult
from spate.client.producer.record_metadata import RecordMetadata
from spate.records.batch import (
    CRC_OFFSET,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    TRANSACTIONAL_MASK,
    batch_crc,
)
from spate.records.compression import Compression, compress
from spate.records.record import Header, encode_record_into
from spate.records.varint import encode_varint, encode_varlong
from spate.structs import TopicPartition

_HEADER = struct.Struct(">qiibIhiqqqhii")
_CRC = struct.Struct(">I")
# The zig-zag varint of every n in 0..8191, the range of nearly all offset deltas and
# lengths: one byte below 64, two from there (about 300 KB, built once at import).
_SMALL_VARINT_LIMIT = 8192
_SMALL_VARINT: tuple[bytes, ...] = tuple(
    bytes((n << 1,)) if n < 64 else bytes(((n << 1) & 0x7F | 0x80, n >> 6)) for n in range(_SMALL_VARINT_LIMIT)
)
_NULL = b"\x01"  # zig-zag -1: a null key or value
_HEADER_PLACE = bytes(HEADER_SIZE)  # filled in by ``encode``
_ZERO = b"\x00"  # the attributes byte, and a count of no headers


class ProducerBatch:
    """One partition's batch: its encoded records, their shared outcome, and its send state.

    Not thread-safe; the producer's lock guards appends, the sender owns a
    batch once it is drained.
    """

    __slots__ = (
        "topic_partition",
        "created_at",
        "compression",
        "capacity",
        "_parts",
        "_size",
        "_payload",
        "record_count",
        "base_timestamp",
        "max_timestamp",
        "result",
        "timestamps",
        "attempts",
        "retry_at",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "is_transactional",
        "in_flight",
        "done",
    )

    def __init__(
        self,
        topic_partition: TopicPartition,
        created_at: float,
        *,
        capacity: int,
        compression: Compression = Compression.NONE,
    ) -> None:
        self.topic_partition = topic_partition
        self.created_at = created_at
        self.compression = compression
        self.capacity = capacity
        # The header's place, then the records' encoded parts; _size is their total length.
        self._parts: list[bytes | bytearray] = [_HEADER_PLACE]
        self._size = HEADER_SIZE
        self._payload: bytearray | None = None
        self.record_count = 0
        self.base_timestamp = 0
        self.max_timestamp = 0
        # The records' shared outcome; their futures read it (see future_record_metadata.py).
        self.result = ProduceResult(topic_partition.topic, topic_partition.partition)
        self.timestamps = self.result.timestamps
        self.attempts = 0
        self.retry_at = 0.0
        self.producer_id = NO_PRODUCER_ID
        self.producer_epoch = NO_PRODUCER_EPOCH
        self.base_sequence = NO_SEQUENCE
        self.is_transactional = False
        self.in_flight = False
        self.done = False

    # --- filling -------------------------------------------------------------------------------

    def try_append(
        self,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: tuple[Header, ...],
        future: Future[RecordMetadata] | None = None,
    ) -> bool:
        """Encode one record into the batch; False (batch unchanged) if it would overflow.

        The first record is always taken, however large, so that a record
        bigger than the batch size still travels, alone. The record's
        outcome is ``result`` at index ``record_count - 1``; ``future``, if
        given, is settled with it too.
        """
        if headers:
            appended = self._append_with_headers(timestamp, key, value, headers)
        else:
            appended = self.append(timestamp, key, value) is not None
        if appended and future is not None:
            self.result.add_callback_unlocked(self.record_count - 1, _settler(future))
        return appended

    def append(self, timestamp: int, key: bytes | None, value: bytes | None) -> bool | None:
        """A header-less record, the producer's hot path: None if it would overflow, else whether the batch is now full.

        Writes the same bytes as ``encode_record_into``: length,
        attributes (0), timestampDelta, offsetDelta, keyLength, key,
        valueLength, value, headersCount (0); see ``records/record.py``.
        Varints of values below 8192, nearly all of them, come from a table.
        """
        if self._payload is not None:
            return None
        count = self.record_count
        timestamp_delta = timestamp - self.base_timestamp if count else 0
        small = _SMALL_VARINT
        if 0 <= timestamp_delta < _SMALL_VARINT_LIMIT:
            timestamp_varint = small[timestamp_delta]
        else:
            timestamp_varint = encode_varlong(timestamp_delta)
        offset_varint = small[count] if count < _SMALL_VARINT_LIMIT else encode_varint(count)
        size = 2 + len(timestamp_varint) + len(offset_varint)
        if key is None:
            key_length = _NULL
            key = b""
            size += 1
        else:
            n = len(key)
            key_length = small[n] if n < _SMALL_VARINT_LIMIT else encode_varint(n)
            size += n + len(key_length)
        if value is None:
            value_length = _NULL
            value = b""
            size += 1
        else:
            n = len(value)
            value_length = small[n] if n < _SMALL_VARINT_LIMIT else encode_varint(n)
            size += n + len(value_length)
        length = small[size] if size < _SMALL_VARINT_LIMIT else encode_varint(size)
        end = self._size + len(length) + size
        if not count:
            self.base_timestamp = self.max_timestamp = timestamp
        elif end > self.capacity:
            return None
        elif timestamp > self.max_timestamp:
            self.max_timestamp = timestamp
        self._parts += (length, _ZERO, timestamp_varint, offset_varint, key_length, key, value_length, value, _ZERO)
        self._size = end
        self.record_count = count + 1
        self.timestamps.append(timestamp)
        return end >= self.capacity

    def _append_with_headers(
        self, timestamp: int, key: bytes | None, value: bytes | None, headers: tuple[Header, ...]
    ) -> bool:
        if self._payload is not None:
            return False
        count = self.record_count
        record = bytearray()
        if count == 0:
            self.base_timestamp = self.max_timestamp = timestamp
            encode_record_into(record, 0, 0, key, value, headers)
        else:
            encode_record_into(record, count, timestamp - self.base_timestamp, key, value, headers)
            if self._size + len(record) > self.capacity:
                return False
            if timestamp > self.max_timestamp:
                self.max_timestamp = timestamp
        self._parts.append(record)
        self._size += len(record)
        self.record_count = count + 1
        self.timestamps.append(timestamp)
        return True

    @property
    def size_in_bytes(self) -> int:
        """Bytes held: header plus records, before compression (after, once sealed)."""
        return self._size if self._payload is None else len(self._payload)

    @property
    def is_full(self) -> bool:
        return self._payload is not None or self._size >= self.capacity

    @property
    def sealed(self) -> bool:
        return self._payload is not None

    def seal(self) -> bytearray:
        """Stop taking records and compress them; returns the header-prefixed payload. Idempotent."""
        if self._payload is not None:
            return self._payload
        records = bytearray().join(self._parts)
        if self.compression is Compression.NONE:
            payload = records
        else:
            payload = bytearray(HEADER_SIZE)
            payload += compress(self.compression, memoryview(records)[HEADER_SIZE:])
        self._payload = payload
        self._parts = []
        return payload

    # --- sending -------------------------------------------------------------------------------

    @property
    def has_sequence(self) -> bool:
        return self.base_sequence != NO_SEQUENCE

    def set_producer_state(self, producer_id: int, producer_epoch: int, base_sequence: int, transactional: bool) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.is_transactional = transactional

    def clear_sequence(self) -> None:
        """Forget the producer identity, so the batch is numbered afresh when next drained."""
        self.set_producer_state(NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_SEQUENCE, False)

    def encode(self) -> bytearray:
        """The complete RecordBatch v2 for the current producer state; seals the batch first."""
        payload = self.seal()
        attributes = int(self.compression)
        if self.is_transactional:
            attributes |= TRANSACTIONAL_MASK
        _HEADER.pack_into(
            payload,
            0,
            0,  # baseOffset: the broker assigns it
            len(payload) - LOG_OVERHEAD,
            NO_PARTITION_LEADER_EPOCH,
            MAGIC_V2,
            0,  # crc, filled in below
            attributes,
            self.record_count - 1,
            self.base_timestamp,
            self.max_timestamp,
            self.producer_id,
            self.producer_epoch,
            self.base_sequence,
            self.record_count,
        )
        _CRC.pack_into(payload, CRC_OFFSET, batch_crc(payload, 0, len(payload)))
        return payload

    # --- outcome ---------------------------------------------------------------------------------

    # ``done`` is set only after the records' delivery callbacks ran: ``flush`` waits for it, and
    # a caller that counts acknowledgements in callbacks must find them all counted once flush returns.

    def complete(self, base_offset: int, log_append_time: int = -1) -> None:
        """Resolve every record's outcome; ``base_offset`` -1 means the offsets are unknown."""
        if self.done:
            return
        try:
            self.result.complete(base_offset, log_append_time)
        finally:
            self.done = True

    def fail(self, error: BaseException) -> None:
        """Fail every record's outcome with ``error``."""
        if self.done:
            return
        try:
            self.result.fail(error)
        finally:
            self.done = True

    def __repr__(self) -> str:
        state: list[Any] = [f"{self.record_count} records", f"{self.size_in_bytes} bytes"]
        if self.has_sequence:
            state.append(f"seq {self.base_sequence}")
        if self.attempts:
            state.append(f"attempt {self.attempts + 1}")
        return f"<ProducerBatch {self.topic_partition} {' '.join(state)}>"


def _settler(future: Future[RecordMetadata]) -> DeliveryCallback:
    """A delivery callback that settles a ``concurrent.futures.Future`` with the record's outcome."""

    def settle(metadata: RecordMetadata | None, error: BaseException | None) -> None:
        try:
            if error is None:
                future.set_result(metadata)  # type: ignore[arg-type]
            else:
                future.set_exception(error)
        except InvalidStateError:
            pass  # the caller cancelled its future; the record was delivered all the same

    return settle
