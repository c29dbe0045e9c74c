"""Crash safety: after a crash the log holds exactly the longest valid prefix.

Fault model: data above the recovery point (not yet fsynced) may be torn at
any byte or have bytes flipped; flushed data stays intact. ``baseOffset`` and
``partitionLeaderEpoch`` lie outside the batch CRC (as in Kafka, so that they
can be stamped), so flips are injected everywhere else in a batch: the length,
magic, CRC and every byte the CRC covers. Hypothesis prints the failing
example and a reproduction blob.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import event, given, settings
from hypothesis import strategies as st

from broker_core.storage.files import FileKind, parse_segment_file_name
from broker_core.storage.local_log import LocalLog
from broker_core.storage.offset_index import OffsetIndex
from broker_core.storage.time_index import TimeIndex
from tests.broker.storage.batch_factory import (
    FakeClock,
    make_batch,
    read_all,
    small_config,
)

CONFIG = small_config(segment_bytes=800, index_interval_bytes=120)


@dataclass(frozen=True)
class Stored:
    base_offset: int
    last_offset: int
    data: bytes
    segment: int
    position: int
    max_timestamp: int


def write_log(directory: Path, clock: FakeClock, specs: list[tuple[int, int, int]], flush_after: int | None) -> tuple[list[Stored], int]:
    log = LocalLog.open(directory, CONFIG, clock=clock)
    stored: list[Stored] = []
    for i, (records, payload, ts_jitter) in enumerate(specs):
        ts = clock.now + ts_jitter
        info = log.append(make_batch(records=records, max_timestamp=ts, payload_size=payload, fill=i))
        found = log.read(info.first_offset, 1)
        stored.append(
            Stored(info.first_offset, info.last_offset, found.read_bytes(), found.segment_base_offset, found.position, ts)
        )
        if i == flush_after:
            log.flush()
    # The process dies here: no close, no trimmed indexes, no clean-shutdown marker.
    return stored, log.recovery_point


def segment_log_path(directory: Path, base_offset: int) -> Path:
    return directory / f"{base_offset:020d}.log"


batch_specs = st.lists(
    st.tuples(st.integers(1, 4), st.integers(0, 200), st.integers(-50, 50)), min_size=1, max_size=40
)


@st.composite
def crash_scenarios(draw):
    specs = draw(batch_specs)
    flush_after = draw(st.one_of(st.none(), st.integers(0, len(specs) - 1)))
    mode = draw(st.sampled_from(["truncate", "flip", "both", "none"]))
    victim = draw(st.floats(0, 1, exclude_max=True))
    cut = draw(st.floats(0, 1, exclude_max=True))
    flips = draw(st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)), min_size=1, max_size=3))
    return specs, flush_after, mode, victim, cut, flips


def damage(directory: Path, stored: list[Stored], recovery_point: int, mode: str, victim: float, cut: float, flips) -> int:
    """Apply the faults; return the index of the first damaged batch (len(stored) if none)."""
    unflushed = [i for i, s in enumerate(stored) if s.last_offset >= recovery_point]
    if not unflushed or mode == "none":
        return len(stored)
    first_damaged = len(stored)
    if mode in ("flip", "both"):
        index = unflushed[int(victim * len(unflushed))]
        batch = stored[index]
        allowed = [p for p in range(len(batch.data)) if 8 <= p < 12 or p >= 16]
        path = segment_log_path(directory, batch.segment)
        raw = bytearray(path.read_bytes())
        masks = {allowed[int(where * len(allowed))]: mask for where, mask in flips}  # one flip per byte
        for at, mask in masks.items():
            raw[batch.position + at] ^= mask
        path.write_bytes(bytes(raw))
        first_damaged = index
    if mode in ("truncate", "both"):
        last_segment = stored[-1].segment
        in_last = [i for i in unflushed if stored[i].segment == last_segment]
        start = stored[in_last[0]].position
        end = stored[in_last[-1]].position + len(stored[in_last[-1]].data)
        at = start + int(cut * (end - start))
        with open(segment_log_path(directory, last_segment), "r+b") as f:
            f.truncate(at)
        torn = [i for i in in_last if stored[i].position + len(stored[i].data) > at]
        first_damaged = min(first_damaged, torn[0])
    return first_damaged


def check_index_files(directory: Path, log: LocalLog) -> None:
    for info in log.segments:
        index = OffsetIndex(directory / f"{info.base_offset:020d}.index", info.base_offset, CONFIG.segment_index_bytes)
        index.sanity_check(info.size)
        time_index = TimeIndex(directory / f"{info.base_offset:020d}.timeindex", info.base_offset, CONFIG.segment_index_bytes)
        time_index.sanity_check(info.next_offset)
        index.release()
        time_index.release()


@settings(max_examples=60, deadline=None, print_blob=True)
@given(crash_scenarios())
def test_reopening_after_a_crash_keeps_exactly_the_longest_valid_prefix(scenario):
    specs, flush_after, mode, victim, cut, flips = scenario
    clock = FakeClock()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "crash-0"
        stored, recovery_point = write_log(directory, clock, specs, flush_after)
        first_damaged = damage(directory, stored, recovery_point, mode, victim, cut, flips)
        event(f"mode={mode} lost={len(stored) - first_damaged > 0} segments={len({s.segment for s in stored}) > 1}")
        survivors = stored[:first_damaged]
        expected_end = survivors[-1].last_offset + 1 if survivors else 0

        log = LocalLog.open(directory, CONFIG, clock=clock, recovery_point=recovery_point)
        assert log.log_end_offset == expected_end
        # Recovered data is not fsynced while loading: it stays above the recovery point until a flush.
        assert log.recovery_point == min(recovery_point, expected_end)
        assert read_all(log) == b"".join(s.data for s in survivors)
        for s in survivors:
            for offset in (s.base_offset, s.last_offset):
                found = log.read(offset, 1)
                assert (found.first_offset, found.read_bytes()) == (s.base_offset, s.data)
        for s in survivors:
            answer = log.offset_for_timestamp(s.max_timestamp)
            first = next(t for t in survivors if t.max_timestamp >= s.max_timestamp)
            assert answer is not None and answer.offset == first.base_offset
        assert not any(
            (p := parse_segment_file_name(path.name)) is not None and p.kind is FileKind.LOG and p.base_offset > expected_end
            for path in directory.iterdir()
        )

        info = log.append(make_batch(records=2, max_timestamp=clock.now))
        assert info.first_offset == expected_end
        log.close()
        check_index_files(directory, log)

        reopened = LocalLog.open(directory, CONFIG, clock=clock, had_clean_shutdown=True)
        assert reopened.log_end_offset == expected_end + 2
        assert read_all(reopened).startswith(b"".join(s.data for s in survivors))
        reopened.close()
