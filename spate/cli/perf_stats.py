"""The statistics of a ``spate perf`` run: latency samples, percentiles and the summary line or document."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from spate.client import RecordMetadata

MB = 1024 * 1024
# Latencies kept by ``perf produce`` at most; beyond that every n-th record is timed.
MAX_LATENCY_SAMPLES = 10_000


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of already sorted values (0 for none)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


@dataclass(frozen=True)
class Summary:
    records: int
    bytes: int
    seconds: float
    latencies_ms: list[float]

    def document(self, verb: str) -> dict[str, object]:
        """The summary for ``--output json``: the same numbers as the line."""
        seconds = max(self.seconds, 1e-9)
        ordered = sorted(self.latencies_ms)
        return {
            "records": self.records, "verb": verb, "seconds": round(self.seconds, 6),
            "records_per_sec": round(self.records / seconds, 3), "mb_per_sec": round(self.bytes / MB / seconds, 6),
            "avg_latency_ms": round(sum(ordered) / len(ordered), 3) if ordered else 0.0,
            "max_latency_ms": round(ordered[-1], 3) if ordered else 0.0,
            **{f"p{name}_latency_ms": round(percentile(ordered, fraction), 3)
               for name, fraction in (("50", 0.5), ("95", 0.95), ("99", 0.99), ("99.9", 0.999))},
        }

    def line(self, verb: str) -> str:
        seconds = max(self.seconds, 1e-9)
        ordered = sorted(self.latencies_ms)
        average = sum(ordered) / len(ordered) if ordered else 0.0
        return (
            f"{self.records} records {verb}, {self.records / seconds:.1f} records/sec "
            f"({self.bytes / MB / seconds:.2f} MB/sec), {average:.2f} ms avg latency, "
            f"{ordered[-1] if ordered else 0.0:.2f} ms max latency, "
            f"{percentile(ordered, 0.5):.2f} ms 50th, {percentile(ordered, 0.95):.2f} ms 95th, "
            f"{percentile(ordered, 0.99):.2f} ms 99th, {percentile(ordered, 0.999):.2f} ms 99.9th."
        )


class LatencySample:
    """Send-to-acknowledgement latencies and failures of every ``every``-th record.

    Kafka's perf tool keeps a sample of at most 500,000 latencies. This one
    times every record of a paced run (``--throughput``) and of runs up to
    ``MAX_LATENCY_SAMPLES`` records; a faster, longer run times every n-th
    record, so that a clock read and a callback per record (a few
    microseconds each, as much as the send itself) do not slow down what is
    measured. The 99.9th percentile then still rests on the slowest ten. The records of a batch succeed or fail together and an
    unpaced run fills batches of hundreds of records, so every batch holds
    timed records and a failure is still seen. Callbacks run on the
    producer's sender thread, the only writer here, so no lock is needed.
    """

    def __init__(self, records: int, *, paced: bool) -> None:
        self.every = 1 if paced else max(1, math.ceil(records / MAX_LATENCY_SAMPLES))
        self.probes = 0
        self.values: list[float] = []
        self.acked_at: list[float] = []
        self.failures: list[BaseException] = []
        self.failed = 0

    def probe(self, sent_at: float) -> Callable[[RecordMetadata | None, BaseException | None], None]:
        self.probes += 1

        def record(metadata: RecordMetadata | None, error: BaseException | None) -> None:
            if error is None:
                now = time.perf_counter()
                self.acked_at.append(now)
                self.values.append((now - sent_at) * 1000)
                return
            self.failed += 1
            if len(self.failures) < 10:
                self.failures.append(error)

        return record
