"""The per-second series of a ``spate perf`` run: records, MB and latency in each second, as CSV, JSON or a plot."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from spate.cli.errors import CliError

MB = 1024 * 1024
COLUMNS = ("second", "records", "mb", "avg_latency_ms", "max_latency_ms")


@dataclass
class _Second:
    records: int = 0
    bytes: int = 0
    latencies_ms: list[float] = field(default_factory=list)


class Series:
    """Counts and latencies by whole second since ``start`` (a ``time.perf_counter`` reading)."""

    def __init__(self, start: float) -> None:
        self.start = start
        self._seconds: dict[int, _Second] = {}

    def _at(self, when: float) -> _Second:
        return self._seconds.setdefault(max(0, math.floor(when - self.start)), _Second())

    def add(self, when: float, records: int, nbytes: int) -> None:
        second = self._at(when)
        second.records += records
        second.bytes += nbytes

    def latency(self, when: float, ms: float) -> None:
        self._at(when).latencies_ms.append(ms)

    def rows(self) -> list[dict[str, float]]:
        """One row per second from the first to the last, quiet seconds included (as zeros)."""
        if not self._seconds:
            return []
        rows = []
        for index in range(max(self._seconds) + 1):
            second = self._seconds.get(index, _Second())
            latencies = second.latencies_ms
            rows.append({
                "second": index,
                "records": second.records,
                "mb": round(second.bytes / MB, 6),
                "avg_latency_ms": round(sum(latencies) / len(latencies), 3) if latencies else 0.0,
                "max_latency_ms": round(max(latencies), 3) if latencies else 0.0,
            })
        return rows


def write_series(rows: list[dict[str, float]], path: Path) -> None:
    """CSV when ``path`` ends in ``.csv``, else one JSON document ``{"series": [...]}``."""
    try:
        with path.open("w", newline="") as out:
            if path.suffix.lower() == ".csv":
                writer = csv.DictWriter(out, fieldnames=COLUMNS)
                writer.writeheader()
                writer.writerows(rows)
            else:
                json.dump({"series": rows}, out, indent=1)
                out.write("\n")
    except OSError as exc:
        raise CliError(f"cannot write --series {path}: {exc.strerror or exc}") from exc


def plot_series(rows: list[dict[str, float]], path: Path, title: str) -> None:
    """Records per second above, average and maximum latency below, as an image (PNG, SVG, PDF by suffix)."""
    try:
        import matplotlib
    except ImportError as exc:
        raise CliError("--plot needs matplotlib: pip install 'spate-platform[plots]'") from exc
    matplotlib.use("Agg")  # files only, no display needed
    from matplotlib import pyplot as plt

    seconds = [row["second"] for row in rows]
    figure, (throughput, latency) = plt.subplots(2, 1, sharex=True, figsize=(8, 5))
    throughput.plot(seconds, [row["records"] for row in rows], marker=".")
    throughput.set_ylabel("records/s")
    throughput.set_title(title)
    latency.plot(seconds, [row["avg_latency_ms"] for row in rows], marker=".", label="avg")
    latency.plot(seconds, [row["max_latency_ms"] for row in rows], marker=".", label="max")
    latency.set_ylabel("latency (ms)")
    latency.set_xlabel("second of the run")
    latency.legend()
    figure.tight_layout()
    try:
        figure.savefig(path)
    except OSError as exc:
        raise CliError(f"cannot write --plot {path}: {exc.strerror or exc}") from exc
    finally:
        plt.close(figure)
