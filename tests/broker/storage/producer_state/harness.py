"""Producer-state test helpers: batch headers, a manager with a log end offset, well-behaved clients."""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

from broker_core.storage.producer_state import (
    AppendOrigin,
    CompletedTxn,
    DuplicateBatch,
    EndTxnMarker,
    ProducerAppendInfo,
    ProducerStateManager,
)
from spate.records.batch import (
    CONTROL_MASK,
    NO_SEQUENCE,
    TRANSACTIONAL_MASK,
    BatchHeader,
)
from spate.records.control import ControlType

MAX_SEQ = 2**31 - 1
COMMIT = EndTxnMarker(ControlType.COMMIT, 0)
ABORT = EndTxnMarker(ControlType.ABORT, 0)
EXPIRATION_MS = 1_000_000
NOW = 10_000_000


class FakeClock:
    def __init__(self, now: int = NOW) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def batch(
    *,
    pid: int = 1,
    epoch: int = 0,
    seq: int = 0,
    count: int = 1,
    offset: int = 0,
    transactional: bool = False,
    control: bool = False,
    timestamp: int = NOW,
) -> BatchHeader:
    attributes = (TRANSACTIONAL_MASK if transactional else 0) | (CONTROL_MASK if control else 0)
    return BatchHeader(
        base_offset=offset,
        batch_length=100,
        partition_leader_epoch=0,
        magic=2,
        crc=0,
        attributes=attributes,
        last_offset_delta=count - 1,
        base_timestamp=timestamp,
        max_timestamp=timestamp,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        records_count=count,
    )


class Harness:
    """A manager plus a log end offset, appending batches the way the log would."""

    def __init__(self, directory: Path, clock: FakeClock | None = None) -> None:
        self.clock = clock or FakeClock()
        self.dir = directory
        self.state = ProducerStateManager(directory, clock=self.clock, max_producer_id_expiration_ms=EXPIRATION_MS)
        self.log_end = 0
        self.completed: CompletedTxn | None = None
        self.log: list[tuple[BatchHeader, EndTxnMarker | None]] = []

    def reopen(self) -> ProducerStateManager:
        return ProducerStateManager(self.dir, clock=self.clock, max_producer_id_expiration_ms=EXPIRATION_MS)

    def append(
        self, *, marker: EndTxnMarker | None = None, origin: AppendOrigin = AppendOrigin.CLIENT, **kwargs
    ) -> ProducerAppendInfo | DuplicateBatch:
        header = batch(offset=self.log_end, timestamp=self.clock.now, **kwargs)
        if header.is_control and marker is None:
            marker = COMMIT
        result = self.state.prepare_append(header, marker, origin=origin)
        if isinstance(result, ProducerAppendInfo):
            self.completed = self.state.complete_append(result, header.base_offset, header.last_offset, self.clock.now)
            self.log.append((header, marker))
            self.log_end = header.next_offset
        return result


def populate(h: Harness) -> None:
    for i in range(7):
        h.append(pid=1, seq=i)
    h.append(pid=2, epoch=4, seq=0, count=3, transactional=True)
    h.append(pid=3, seq=0)
    h.append(pid=3, control=True, seq=NO_SEQUENCE)


# A step: (producer id, action, record count).
steps = st.lists(
    st.tuples(
        st.integers(1, 3),
        st.sampled_from(["next", "next", "retry", "bump", "bump_with_data", "txn", "marker"]),
        st.integers(1, 4),
    ),
    max_size=40,
)


class Clients:
    """Well-behaved idempotent and transactional producers; they never trigger a refusal."""

    def __init__(self) -> None:
        self.seqs: dict[int, int] = {}
        self.epochs: dict[int, int] = {}
        self.in_txn: dict[int, bool] = {}

    def step(self, h: Harness, pid: int, action: str, count: int) -> None:
        h.clock.now += 1
        epoch = self.epochs.setdefault(pid, 0)
        if action == "retry":
            entry = h.state.last_entry(pid)
            if entry and entry.batches and entry.producer_epoch == epoch:
                b = entry.batches[0]
                retry = batch(pid=pid, epoch=epoch, seq=b.first_seq, count=b.last_seq - b.first_seq + 1)
                result = h.state.prepare_append(retry)
                assert isinstance(result, DuplicateBatch) and result.first_offset == b.first_offset
        elif action == "bump" or (action == "bump_with_data" and self.in_txn.get(pid)):
            # The coordinator ends any transaction with a marker under the new epoch.
            self.epochs[pid], self.seqs[pid], self.in_txn[pid] = epoch + 1, 0, False
            h.append(pid=pid, epoch=epoch + 1, control=True, seq=NO_SEQUENCE)
        elif action == "bump_with_data":
            self.epochs[pid], self.seqs[pid] = epoch + 1, count
            h.append(pid=pid, epoch=epoch + 1, seq=0, count=count)
        elif action == "marker":
            self.in_txn[pid] = False
            h.append(pid=pid, epoch=epoch, control=True, seq=NO_SEQUENCE)
        else:
            txn = self.in_txn.get(pid, False) or action == "txn"
            self.in_txn[pid] = txn
            seq = self.seqs.get(pid, 0)
            h.append(pid=pid, epoch=epoch, seq=seq, count=count, transactional=txn)
            self.seqs[pid] = seq + count

    def run(self, h: Harness, plan) -> None:
        for step in plan:
            self.step(h, *step)
