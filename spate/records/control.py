"""Control batches: the transaction markers a coordinator writes to partitions.

A control batch has the control and transactional attribute bits set, the
producer's id and epoch, no sequence, and exactly one record::

    key    version int16 (0), type int16 (0 = ABORT, 1 = COMMIT)
    value  version int16 (0), coordinatorEpoch int32

The marker takes an offset like any record, so consumers see a gap there.
Readers accept key and value versions above 0 and ignore bytes after the
fields they know, as later versions may append fields.
"""

from __future__ import annotations

import struct
from enum import IntEnum

from spate.records.batch import NO_PARTITION_LEADER_EPOCH, NO_SEQUENCE
from spate.records.builder import build_batch
from spate.records.errors import CorruptRecordError
from spate.records.record import Record

CONTROL_KEY_VERSION = 0
END_TXN_MARKER_VERSION = 0

_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")


class ControlType(IntEnum):
    ABORT = 0
    COMMIT = 1


def build_control_batch(
    control_type: ControlType,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    *,
    timestamp: int,
    base_offset: int = 0,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> bytes:
    """One transaction marker (ABORT or COMMIT) as a complete RecordBatch v2."""
    control_type = ControlType(control_type)
    record = Record(
        offset=base_offset,
        timestamp=timestamp,
        key=_KEY.pack(CONTROL_KEY_VERSION, control_type),
        value=_VALUE.pack(END_TXN_MARKER_VERSION, coordinator_epoch),
    )
    return build_batch(
        [record],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=NO_SEQUENCE,
        is_transactional=True,
        is_control=True,
        partition_leader_epoch=partition_leader_epoch,
    )


def parse_control_record(record: Record) -> tuple[ControlType, int]:
    """``(control type, coordinator epoch)`` of a transaction marker record.

    A missing or short key or value, a negative version, or a control type
    other than ABORT and COMMIT raises ``CorruptRecordError``.
    """
    key = record.key
    if key is None or len(key) < _KEY.size:
        raise CorruptRecordError(f"control record at offset {record.offset} has a missing or short key")
    key_version, type_id = _KEY.unpack_from(key)
    if key_version < 0:
        raise CorruptRecordError(f"control record at offset {record.offset} has key version {key_version}")
    try:
        control_type = ControlType(type_id)
    except ValueError:
        raise CorruptRecordError(
            f"control record at offset {record.offset} has unknown control type {type_id}"
        ) from None
    value = record.value
    if value is None or len(value) < _VALUE.size:
        raise CorruptRecordError(f"control record at offset {record.offset} has a missing or short value")
    value_version, coordinator_epoch = _VALUE.unpack_from(value)
    if value_version < 0:
        raise CorruptRecordError(f"control record at offset {record.offset} has value version {value_version}")
    return control_type, coordinator_epoch
