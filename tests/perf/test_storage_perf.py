"""Storage engine benchmark: append and random-read throughput.

Run with ``pytest tests/perf/test_storage_perf.py -m perf -s``. Figures are
compared as ratios within one run (never against absolute numbers from other
runs), and printed; the only assertions are about correctness.

1. Appends of 64 KiB batches (64 records of 1 KiB) against plain sequential
   ``write`` calls of the same bytes to a file on the same disk.
2. Append throughput and random-read throughput (offset lookup plus reading
   one batch) with ~10 MB of log and with ~2 GB of log. Target: the large log
   within 15% of the small one. Lookups alone (no batch copied) are reported
   too: copying a random batch out of a 10 MB file that sits in the CPU cache
   is cheaper than out of 2 GB in RAM, whatever the storage engine does.

``SPATE_PERF_LARGE_BYTES`` scales the large log down (e.g. ``200000000``);
``SPATE_PERF_APPEND_BYTES`` sets the volume of part 1. Logs are fsynced after
filling, so the timed phases do not inherit the fill's dirty pages, and the
small and large measurements are interleaved so that load on the machine
affects both alike.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from pathlib import Path
from typing import Callable

import pytest

from broker_core.storage.config import LogConfig
from broker_core.storage.local_log import LocalLog
from spate.records.batch import validate_batch
from tests.broker.storage.batch_factory import make_batch

pytestmark = pytest.mark.perf

RECORD_SIZE = 1024
RECORDS_PER_BATCH = 64
MB = 1_000_000
SMALL_LOG_BYTES = 10 * MB
LARGE_LOG_BYTES = int(os.environ.get("SPATE_PERF_LARGE_BYTES", 2_000 * MB))
APPEND_BYTES = int(os.environ.get("SPATE_PERF_APPEND_BYTES", 256 * MB))
WINDOW_BYTES = 64 * MB
RANDOM_READS = 5_000
REPEATS = 7
TARGET = 0.15


def batch_bytes() -> bytes:
    # The records section is opaque to storage; 1 KiB of filler per record.
    return make_batch(records=RECORDS_PER_BATCH, payload_size=RECORDS_PER_BATCH * RECORD_SIZE, max_timestamp=1)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def test_append_throughput_against_plain_sequential_writes(disk_tmp: Path):
    batch = batch_bytes()
    count = max(1, APPEND_BYTES // len(batch))
    total = count * len(batch)
    log_rates, plain_rates = [], []

    def plain(run: int) -> None:
        path = disk_tmp / f"plain-{run}.bin"
        with open(path, "wb", buffering=0) as f:
            plain_rates.append(total / timed(lambda: [f.write(batch) for _ in range(count)]) / MB)
            os.fsync(f.fileno())  # untimed: no dirty pages carried into the next run
        path.unlink()

    def log_append(run: int) -> None:
        log = LocalLog.open(disk_tmp / f"bench-{run}", LogConfig(), clock=now_ms)
        log_rates.append(total / timed(lambda: [log.append(batch) for _ in range(count)]) / MB)
        assert log.log_end_offset == count * RECORDS_PER_BATCH
        log.flush()
        log.delete()

    # Alternate which goes first so neither always meets the other's writeback.
    for run in range(REPEATS):
        for step in (plain, log_append) if run % 2 == 0 else (log_append, plain):
            step(run)

    log_rate, plain_rate = max(log_rates), max(plain_rates)
    print()
    print(f"append of {total / MB:.0f} MB in {len(batch)}-byte batches ({RECORDS_PER_BATCH} x {RECORD_SIZE} B records), best of {REPEATS}")
    print(f"  {'plain sequential write':<28}{plain_rate:>10.0f} MB/s")
    print(f"  {'Log.append':<28}{log_rate:>10.0f} MB/s")
    print(f"  {'ratio Log.append / write':<28}{log_rate / plain_rate:>10.2f}")


def fill_log(directory: Path, target_bytes: int, batch: bytes) -> LocalLog:
    log = LocalLog.open(directory, LogConfig(), clock=now_ms)
    while log.size_in_bytes < target_bytes:
        log.append(batch)
    log.flush()
    return log


def measure_once(log: LocalLog, batch: bytes, rng: random.Random, results: dict[str, list[float]]) -> None:
    """One repetition: append a window (then cut it off again), random lookups, random reads."""
    window = max(1, WINDOW_BYTES // len(batch))
    end = log.log_end_offset
    results["append"].append(window * len(batch) / timed(lambda: [log.append(batch) for _ in range(window)]) / MB)
    log.truncate_to(end)  # back to the same size for the next repetition

    offsets = [rng.randrange(log.log_start_offset, log.log_end_offset) for _ in range(RANDOM_READS)]

    def lookup_all() -> None:
        for offset in offsets:
            log.read(offset, 1)

    def read_all() -> None:
        for offset in offsets:
            data = log.read(offset, 1).read_bytes()
            if len(data) != len(batch):
                raise AssertionError(f"read of offset {offset} returned {len(data)} bytes")

    results["lookups"].append(RANDOM_READS / timed(lookup_all))
    results["reads"].append(RANDOM_READS / timed(read_all))


def test_append_and_random_read_throughput_do_not_degrade_with_log_size(disk_tmp: Path):
    batch = batch_bytes()
    logs = {
        "small": fill_log(disk_tmp / "small-0", SMALL_LOG_BYTES, batch),
        "large": fill_log(disk_tmp / "large-0", LARGE_LOG_BYTES, batch),
    }
    samples: dict[str, dict[str, list[float]]] = {name: {"append": [], "lookups": [], "reads": []} for name in logs}
    rng = random.Random(1234)
    # Interleaved, alternating order: load changes on the machine hit both sides alike.
    for run in range(REPEATS):
        for name in ("small", "large") if run % 2 == 0 else ("large", "small"):
            measure_once(logs[name], batch, rng, samples[name])

    sizes = {name: log.size_in_bytes for name, log in logs.items()}
    segments = {name: log.number_of_segments for name, log in logs.items()}
    for log in logs.values():
        probe = log.read(log.log_end_offset - 1, 1).read_bytes()
        assert validate_batch(probe).last_offset == log.log_end_offset - 1
        log.delete()
    small = {key: statistics.median(values) for key, values in samples["small"].items()}
    large = {key: statistics.median(values) for key, values in samples["large"].items()}

    def verdict(ratio: float) -> str:
        return "PASS" if ratio >= 1 - TARGET else "MISS"

    print()
    print(f"log size effect (target: large within {TARGET:.0%} of small; median of {REPEATS}, interleaved)")
    print(f"  {'':<26}{'small':>14}{'large':>14}{'large/small':>13}")
    print(f"  {'log size (MB)':<26}{sizes['small'] / MB:>14.0f}{sizes['large'] / MB:>14.0f}")
    print(f"  {'segments':<26}{segments['small']:>14.0f}{segments['large']:>14.0f}")
    rows = [
        ("append (MB/s)", "append"),
        ("random reads (reads/s)", "reads"),
        ("  of which lookups only", "lookups"),
    ]
    for label, key in rows:
        ratio = large[key] / small[key]
        print(f"  {label:<26}{small[key]:>14.0f}{large[key]:>14.0f}{ratio:>13.2f}  {verdict(ratio)}")
    print(f"  {'random reads (MB/s)':<26}{small['reads'] * len(batch) / MB:>14.0f}{large['reads'] * len(batch) / MB:>14.0f}")
    assert sizes["large"] >= LARGE_LOG_BYTES and sizes["small"] >= SMALL_LOG_BYTES
