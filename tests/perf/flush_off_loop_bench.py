"""How long a flush of unflushed log data holds the event loop: inline, and as the scheduler now runs it.

    .venv/bin/python -m tests.perf.flush_off_loop_bench [--megabytes 100] [--rounds 3]

Each round fills a fresh log with ``--megabytes`` of 1 MB batches (page
cache only), then flushes it: once with ``LocalLog.flush`` (every fsync on
the calling thread, as the scheduler did), once as the broker's flush job
does now (``begin_scheduled_flush`` and ``complete_flush`` on the loop, the
fsyncs of ``PendingFlush.run`` on a worker thread). Prints the milliseconds
each part took.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

from broker_core.storage.local_log import LocalLog
from tests.broker.storage.batch_factory import make_batch, small_config

NOW_MS = 10**9


def filled_log(directory: Path, megabytes: int) -> LocalLog:
    config = small_config(segment_bytes=64 * 1024**2, index_interval_bytes=4096, flush_ms=0)
    log = LocalLog.open(directory, config, clock=lambda: NOW_MS)
    batch = make_batch(records=100, payload_size=1_000_000)
    for _ in range(megabytes):
        log.append(batch)
    return log


def inline_flush_ms(scratch: Path, megabytes: int) -> float:
    log = filled_log(scratch / "inline-0", megabytes)
    started = time.perf_counter()
    log.flush()
    return 1000 * (time.perf_counter() - started)


def scheduled_flush_ms(scratch: Path, megabytes: int) -> tuple[float, float]:
    """(ms on the loop's thread, ms on the worker thread)."""
    log = filled_log(scratch / "scheduled-0", megabytes)
    started = time.perf_counter()
    pending = log.begin_scheduled_flush(NOW_MS + 1)
    begun = time.perf_counter()
    worker = threading.Thread(target=pending.run)
    worker.start()
    worker.join()
    synced = time.perf_counter()
    log.complete_flush(pending)
    done = time.perf_counter()
    if log.recovery_point != log.log_end_offset:
        raise RuntimeError("the scheduled flush did not reach the log end")
    return 1000 * ((begun - started) + (done - synced)), 1000 * (synced - begun)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    repo = Path(__file__).resolve().parents[2]
    print(f"| round | inline flush of {args.megabytes} MB (loop held) | scheduled: loop held | scheduled: worker |")
    print("|---|---|---|---|")
    for round_ in range(args.rounds):
        with tempfile.TemporaryDirectory(dir=repo, prefix=".perf-") as scratch:
            inline = inline_flush_ms(Path(scratch), args.megabytes)
            on_loop, on_worker = scheduled_flush_ms(Path(scratch), args.megabytes)
        print(f"| {round_} | {inline:.1f} ms | {on_loop:.1f} ms | {on_worker:.1f} ms |")


if __name__ == "__main__":
    main()
