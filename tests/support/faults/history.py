"""What a producer was told, what a reader found, and the checker that compares them.

A workload writes unique values ``"<partition>:<seq>"`` (``seq`` counts up
per partition) and records each one's fate: acknowledged (with the offset
the broker gave it), failed (the delivery report's error), or unresolved
(no report before the workload stopped). A reader then reads every
partition from the start. The checker reports, with counts and the first
few examples:

* **lost**: acknowledged but never read (the broken acks=all promise);
* **duplicates**: read more than once (an idempotent producer must not
  duplicate, whatever it retried);
* **out of order**: within a partition, a value read after a value with a
  higher sequence (one producer's order must hold per partition);
* **moved**: read at another offset than the one acknowledged (an
  acknowledged offset was reused or the log was rewritten);
* **unexpected**: read but never sent, or not of the workload's form.

Failed and unresolved values may or may not be read: an error after the
write, or a timeout, does not say the write did not happen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

EXAMPLES = 5


def value_of(partition: int, seq: int) -> str:
    return f"{partition}:{seq}"


def parse_value(value: str) -> tuple[int, int] | None:
    """``(partition, seq)`` of a workload value; None for anything else."""
    partition, sep, seq = value.partition(":")
    if not sep or not partition.isdigit() or not seq.isdigit():
        return None
    return int(partition), int(seq)


@dataclass
class WorkloadHistory:
    """Every value a workload sent and what became of it."""

    topic: str
    partitions: int
    acked: dict[str, int] = field(default_factory=dict)  # value -> offset acknowledged
    failed: dict[str, str] = field(default_factory=dict)  # value -> error
    unresolved: set[str] = field(default_factory=set)
    sent: int = 0
    fatal_error: str | None = None


@dataclass(frozen=True)
class OutOfOrder:
    partition: int
    offset: int
    seq: int
    after_seq: int


@dataclass(frozen=True)
class Moved:
    value: str
    acked_offset: int
    read_offsets: tuple[int, ...]


@dataclass(frozen=True)
class HistoryReport:
    acknowledged: int
    failed: int
    unresolved: int
    read: int
    lost: tuple[str, ...]
    duplicates: tuple[str, ...]
    out_of_order: tuple[OutOfOrder, ...]
    moved: tuple[Moved, ...]
    unexpected: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicates or self.out_of_order or self.moved or self.unexpected)

    def summary(self) -> str:
        """One paragraph: the counts, then the first few examples of each problem."""
        lines = [
            f"{self.acknowledged} acknowledged, {self.failed} failed, {self.unresolved} unresolved, {self.read} read; "
            f"{len(self.lost)} lost, {len(self.duplicates)} duplicated, {len(self.out_of_order)} out of order, "
            f"{len(self.moved)} moved, {len(self.unexpected)} unexpected"
        ]
        for name, items in (("lost", self.lost), ("duplicated", self.duplicates), ("out of order", self.out_of_order),
                            ("moved", self.moved), ("unexpected", self.unexpected)):
            if items:
                shown = ", ".join(str(item) for item in items[:EXAMPLES])
                more = f" and {len(items) - EXAMPLES} more" if len(items) > EXAMPLES else ""
                lines.append(f"  {name}: {shown}{more}")
        return "\n".join(lines)


def check_history(history: WorkloadHistory, read: Mapping[int, Sequence[tuple[int, str]]]) -> HistoryReport:
    """Compare what ``history`` was acknowledged with ``read``: per partition, (offset, value) in offset order."""
    where: dict[str, list[int]] = {}
    out_of_order: list[OutOfOrder] = []
    unexpected: list[str] = []
    sent = set(history.acked) | set(history.failed) | history.unresolved
    for partition in sorted(read):
        highest: int | None = None
        for offset, value in sorted(read[partition]):
            repeated = value in where
            where.setdefault(value, []).append(offset)
            parsed = parse_value(value)
            if parsed is None or parsed[0] != partition or value not in sent:
                unexpected.append(value)
                continue
            if repeated:  # a duplicate, counted as such; its order says nothing more
                continue
            seq = parsed[1]
            if highest is not None and seq < highest:
                out_of_order.append(OutOfOrder(partition, offset, seq, highest))
            highest = seq if highest is None else max(highest, seq)
    counts = Counter({value: len(offsets) for value, offsets in where.items()})
    lost = [value for value in history.acked if value not in where]
    moved = [
        Moved(value, offset, tuple(where[value])) for value, offset in history.acked.items()
        if value in where and offset not in where[value]
    ]
    return HistoryReport(
        acknowledged=len(history.acked),
        failed=len(history.failed),
        unresolved=len(history.unresolved),
        read=sum(len(values) for values in read.values()),
        lost=tuple(_by_partition_and_seq(lost)),
        duplicates=tuple(_by_partition_and_seq(v for v, n in counts.items() if n > 1 and parse_value(v) is not None)),
        out_of_order=tuple(out_of_order),
        moved=tuple(sorted(moved, key=lambda m: _sort_key(m.value))),
        unexpected=tuple(unexpected),
    )


def _by_partition_and_seq(values: Iterable[str]) -> list[str]:
    return sorted(values, key=_sort_key)


def _sort_key(value: str) -> tuple[int, int]:
    return parse_value(value) or (-1, -1)
