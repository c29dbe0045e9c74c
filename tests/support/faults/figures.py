"""The figures a fault scenario prints: what was acknowledged and lost, and how long the cluster took.

Each scenario fills one :class:`FaultFigures` and prints it as one line
(``pytest -s`` shows it); the suite also lists every scenario's line at the
end of the run (:data:`RECORDED`), whatever ``-s`` says.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.support.faults.history import HistoryReport

# Every scenario's figures of this run, in the order they were printed.
RECORDED: list[FaultFigures] = []


@dataclass
class FaultFigures:
    scenario: str
    faults: int = 0
    acknowledged: int = 0
    lost: int = 0
    duplicated: int = 0
    out_of_order: int = 0
    failed: int = 0
    unresolved: int = 0
    # Seconds from each fault to the moment every partition the victim led had a new leader.
    to_new_leader_s: list[float] = field(default_factory=list)
    # Seconds from each restart (or heal) to every replica being back in the ISR.
    to_in_sync_s: list[float] = field(default_factory=list)
    # The longest time a partition's producer went without an acknowledgement around each fault.
    producer_pause_s: list[float] = field(default_factory=list)
    extra: dict[str, object] = field(default_factory=dict)

    def add_history(self, report: HistoryReport) -> None:
        self.acknowledged += report.acknowledged
        self.lost += len(report.lost)
        self.duplicated += len(report.duplicates)
        self.out_of_order += len(report.out_of_order)
        self.failed += report.failed
        self.unresolved += report.unresolved

    def line(self) -> str:
        parts = [
            f"faults={self.faults}", f"acked={self.acknowledged}", f"lost={self.lost}",
            f"duplicated={self.duplicated}", f"out_of_order={self.out_of_order}",
            f"failed={self.failed}", f"unresolved={self.unresolved}",
        ]
        for name, values in (("new_leader", self.to_new_leader_s), ("back_in_isr", self.to_in_sync_s),
                             ("producer_pause", self.producer_pause_s)):
            if values:
                parts.append(f"{name}_s=max {max(values):.2f}/mean {sum(values) / len(values):.2f}")
        parts += [f"{key}={value}" for key, value in self.extra.items()]
        return f"[{self.scenario}] " + " ".join(parts)

    def publish(self) -> None:
        """Print the line, and keep it for the end-of-run summary."""
        print(self.line(), flush=True)
        RECORDED.append(self)
