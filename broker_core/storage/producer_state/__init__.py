"""Per-partition producer state: idempotent-producer dedup, epoch fencing and
the first offset of each open transaction (Kafka's ProducerStateManager).

* :mod:`.errors` — the refusals, each with Kafka's error code;
* :mod:`.entry` — the values: a producer's entry, an append's origin, a
  validated batch, a duplicate, a transaction a marker closed;
* :mod:`.append` — the rules a batch is checked against, staged for a whole
  append before anything is written;
* :mod:`.snapshot` — the snapshot files' byte layout and names;
* :mod:`.manager` — :class:`ProducerStateManager`, the committed state, replay
  and snapshots of one partition.
"""

from broker_core.storage.producer_state.append import MAX_SEQUENCE, ProducerAppendStaging
from broker_core.storage.producer_state.entry import (
    NO_COORDINATOR_EPOCH,
    NUM_BATCHES_TO_RETAIN,
    AppendOrigin,
    BatchMetadata,
    CompletedTxn,
    DuplicateBatch,
    EndTxnMarker,
    ProducerAppendInfo,
    ProducerStateEntry,
)
from broker_core.storage.producer_state.errors import (
    CorruptSnapshotError,
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    ProducerStateError,
    TransactionCoordinatorFencedError,
    UnknownProducerIdError,
)
from broker_core.storage.producer_state.manager import SNAPSHOTS_TO_KEEP, ProducerStateManager
from broker_core.storage.producer_state.snapshot import (
    SNAPSHOT_VERSION,
    decode_snapshot,
    encode_snapshot,
    snapshot_path,
)

__all__ = [
    "MAX_SEQUENCE",
    "NO_COORDINATOR_EPOCH",
    "NUM_BATCHES_TO_RETAIN",
    "SNAPSHOTS_TO_KEEP",
    "SNAPSHOT_VERSION",
    "AppendOrigin",
    "BatchMetadata",
    "CompletedTxn",
    "CorruptSnapshotError",
    "DuplicateBatch",
    "EndTxnMarker",
    "InvalidProducerEpochError",
    "InvalidTxnStateError",
    "OutOfOrderSequenceError",
    "ProducerAppendInfo",
    "ProducerAppendStaging",
    "ProducerStateEntry",
    "ProducerStateError",
    "ProducerStateManager",
    "TransactionCoordinatorFencedError",
    "UnknownProducerIdError",
    "decode_snapshot",
    "encode_snapshot",
    "snapshot_path",
]
