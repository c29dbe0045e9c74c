"""Random operation sequences against a simple model of the log.

The model is the list of batches a reader should see. Every operation the
follower, retention and restart paths use is mixed in; after each step every
offset must read back the batch the model holds for it.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from broker_core.storage.local_log import LocalLog
from tests.broker.storage.batch_factory import (
    FakeClock,
    make_batch,
    read_all,
    small_config,
)

CONFIG = small_config(segment_bytes=600, index_interval_bytes=90, segment_index_bytes=48, file_delete_delay_ms=0)


class LogModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp())
        self.directory = self.tmp / "model-0"
        self.clock = FakeClock()
        self.log = LocalLog.open(self.directory, CONFIG, clock=self.clock)
        self.batches: list[tuple[int, int, bytes]] = []  # (base, last, bytes) at or above the log start
        self.start = 0
        self.end = 0

    def teardown(self) -> None:
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    @rule(records=st.integers(1, 5), payload=st.integers(0, 150))
    def append(self, records: int, payload: int) -> None:
        info = self.log.append(make_batch(records=records, payload_size=payload, max_timestamp=self.clock.now))
        assert info.first_offset == self.end
        self.batches.append((info.first_offset, info.last_offset, self.log.read(info.first_offset, 1).read_bytes()))
        self.end = info.last_offset + 1

    @rule()
    def roll(self) -> None:
        self.log.roll()

    @rule(where=st.floats(0, 1))
    def truncate(self, where: float) -> None:
        target = int(where * self.end)
        self.log.truncate_to(target)
        if target < self.start:
            self.batches, self.start, self.end = [], target, target
            return
        removed = [b for b in self.batches if b[1] >= target]
        if removed:
            # A batch straddling the target goes as a whole; the log ends where it began.
            self.end = min(removed[0][0], target)
        self.batches = [b for b in self.batches if b[1] < target]
        self.start = min(self.start, self.end)

    @precondition(lambda self: self.end > self.start)
    @rule(where=st.floats(0, 1))
    def delete_records(self, where: float) -> None:
        target = self.start + int(where * (self.end - self.start))
        self.log.delete_records_before(target)
        self.start = max(self.start, target)
        self.batches = [b for b in self.batches if b[1] >= self.start]

    @rule(clean=st.booleans(), flush=st.booleans())
    def restart(self, clean: bool, flush: bool) -> None:
        if flush:
            self.log.flush()
        recovery_point, log_start = self.log.recovery_point, self.log.log_start_offset
        if clean:
            # As the log manager's shutdown: flush, close, then checkpoint the recovery point (the log end).
            self.log.flush()
            self.log.close()
            recovery_point = self.log.recovery_point
        self.log = LocalLog.open(
            self.directory, CONFIG, clock=self.clock, recovery_point=recovery_point,
            log_start_offset=log_start, had_clean_shutdown=clean,
        )

    @invariant()
    def offsets_match_the_model(self) -> None:
        assert (self.log.log_start_offset, self.log.log_end_offset) == (self.start, self.end)

    @invariant()
    def every_batch_reads_back(self) -> None:
        for base, last, data in self.batches:
            found = self.log.read(max(base, self.start), 1)
            assert (found.first_offset, found.read_bytes()) == (base, data)
        assert read_all(self.log) == b"".join(data for _, _, data in self.batches)


LogModel.TestCase.settings = settings(max_examples=40, stateful_step_count=25, deadline=None)
test_log_behaves_like_its_model = LogModel.TestCase
