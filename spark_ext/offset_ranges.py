"""Planning what one read covers: offset ranges, read limits and input-partition splitting.

Pure functions over offsets; the driver asks the brokers first and passes
the answers in.

* :func:`cap_offsets` spreads ``maxOffsetsPerTrigger`` over partitions in
  proportion to what each has available (largest remainder, so the batch
  holds exactly the limit, never more).
* :func:`cap_bytes` does the same for ``maxBytesPerTrigger`` with sizes
  estimated from a :class:`SizeSample` per partition.

How bytes are estimated. Kafka offers no "bytes between two offsets"
lookup, so before planning a byte-limited micro-batch the driver reads a
sample from the log of every partition with new data, starting exactly at
the batch's start offset (up to 512 KiB per partition, and never past the
end offset; see ``OffsetReader.sample_sizes``). A record costs what the
query receives for it: key + value (+ header keys and values with
``includeHeaders``), not its compressed size on disk. Inside the sample the
cost of every record is known, so a budget that ends inside it is cut at an
exact record boundary; beyond it, each offset is assumed to cost the
sample's average bytes per offset (offsets without records, such as
transaction markers, count as free). The estimate is exact for budgets up
to the sample size and for evenly sized records, and otherwise as good as
the sample is representative of what follows.
* :func:`split_ranges` cuts ranges into more input partitions for
  ``minPartitions`` and ``maxRecordsPerPartition``; :func:`coalesce_ranges`
  packs small ones together for ``minRecordsPerPartition``.

Offsets are counted as Kafka counts them: a range ``[from, until)`` spans
``until - from`` offsets, some of which may hold no record (transaction
markers, compacted or aborted records), exactly as Spark's Kafka source
counts them for ``maxOffsetsPerTrigger``.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Iterable, Mapping, Sequence

from spate.client import TopicPartition


@dataclass(frozen=True, slots=True, order=True)
class OffsetRange:
    """Offsets ``[from_offset, until_offset)`` of one partition."""

    topic: str
    partition: int
    from_offset: int
    until_offset: int

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    @property
    def size(self) -> int:
        return self.until_offset - self.from_offset


def ranges_between(starts: Mapping[TopicPartition, int], ends: Mapping[TopicPartition, int]) -> list[OffsetRange]:
    """The non-empty ranges from ``starts`` to ``ends`` (partitions in both), sorted."""
    return sorted(
        OffsetRange(tp.topic, tp.partition, starts[tp], ends[tp])
        for tp in ends
        if tp in starts and ends[tp] > starts[tp]
    )


# --- maxOffsetsPerTrigger -------------------------------------------------------------------------


def cap_offsets(
    starts: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int], max_offsets: int
) -> dict[TopicPartition, int]:
    """End offsets covering at most ``max_offsets`` offsets in all, shared in proportion to availability."""
    if max_offsets < 1:
        raise ValueError(f"max_offsets must be positive, not {max_offsets}")
    tps = sorted(latest)
    available = [max(0, latest[tp] - starts.get(tp, latest[tp])) for tp in tps]
    if sum(available) <= max_offsets:
        return dict(latest)
    shares = apportion(max_offsets, available, available)
    return {tp: starts[tp] + share if tp in starts else latest[tp] for tp, share in zip(tps, shares)}


def apportion(total: int, weights: Sequence[int], caps: Sequence[int]) -> list[int]:
    """Split ``total`` units in proportion to ``weights``, each share at most its cap.

    Largest-remainder method: every share is the floor of its exact quota,
    then the units left over go to the largest fractional parts (ties to the
    earlier entry), skipping entries at their cap. The result sums to
    ``min(total, sum(caps))`` when every positive cap has a positive weight.
    """
    weight_sum = sum(weights)
    if weight_sum <= 0 or total <= 0:
        return [0] * len(weights)
    shares = [min(cap, total * w // weight_sum) for w, cap in zip(weights, caps)]
    left = total - sum(shares)
    order = sorted(range(len(weights)), key=lambda i: (-(total * weights[i] % weight_sum), i))
    while left > 0:
        progressed = False
        for i in order:
            if left == 0:
                break
            if shares[i] < caps[i] and weights[i] > 0:
                shares[i] += 1
                left -= 1
                progressed = True
        if not progressed:
            break
    return shares


# --- maxBytesPerTrigger ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SizeSample:
    """The record sizes found by reading a partition from ``start`` up to ``covered_until``.

    ``offsets`` and ``sizes`` list each record read (offsets ascending). A
    record's size is the bytes a query receives for it: key + value + every
    header key (UTF-8) and value. ``covered_until`` is the position after
    the sample, so offsets without records inside it (markers, compaction,
    aborted data) count as costing nothing.
    """

    start: int
    covered_until: int
    offsets: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(self.sizes)

    @property
    def bytes_per_offset(self) -> float | None:
        """Average bytes per offset over the sample (None when it covered no offsets)."""
        span = self.covered_until - self.start
        return self.total_bytes / span if span > 0 else None


def estimate_bytes(sample: SizeSample, until: int, fallback_per_offset: float) -> float:
    """Estimated bytes of ``[sample.start, until)``: exact inside the sample, extrapolated beyond it.

    Beyond the sample the average bytes per offset of the sample is assumed
    (``fallback_per_offset`` when the sample covered nothing), which is exact
    for evenly sized records and a good guess for a steady stream.
    """
    inside = bisect.bisect_left(sample.offsets, until)
    known = sum(sample.sizes[:inside])
    beyond = max(0, until - sample.covered_until)
    per_offset = sample.bytes_per_offset
    return known + beyond * (fallback_per_offset if per_offset is None else per_offset)


def end_within_budget(sample: SizeSample, budget: float, latest: int, fallback_per_offset: float) -> int:
    """The furthest end offset (at most ``latest``) whose estimated bytes from the start fit in ``budget``."""
    cumulative = list(accumulate(sample.sizes))
    fitting = bisect.bisect_right(cumulative, budget)
    if fitting < len(cumulative):
        # Record number ``fitting`` would overflow the budget: stop just before it.
        return min(latest, sample.offsets[fitting])
    left = budget - (cumulative[-1] if cumulative else 0)
    per_offset = sample.bytes_per_offset
    if per_offset is None:
        per_offset = fallback_per_offset
    extra = latest if per_offset <= 0 else math.floor(left / per_offset)
    return min(latest, max(sample.start, sample.covered_until) + extra)


def cap_bytes(
    starts: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
    samples: Mapping[TopicPartition, SizeSample],
    max_bytes: int,
) -> dict[TopicPartition, int]:
    """End offsets whose estimated record bytes add up to at most ``max_bytes``.

    The budget is shared in proportion to each partition's estimated bytes
    available; what rounding leaves over is then offered to the partitions in
    order. Partitions without a sample are estimated with the average of the
    sampled ones. At least one record is always planned when any is
    available, so a record bigger than the whole budget does not stall the
    stream.
    """
    if max_bytes < 1:
        raise ValueError(f"max_bytes must be positive, not {max_bytes}")
    tps = [tp for tp in sorted(latest) if tp in starts and latest[tp] > starts[tp]]
    ends = dict(latest)
    for tp in latest:
        if tp in starts and latest[tp] <= starts[tp]:
            ends[tp] = starts[tp]
    if not tps:
        return ends
    rates = [s.bytes_per_offset for s in samples.values() if s.bytes_per_offset is not None]
    fallback = sum(rates) / len(rates) if rates else float(max_bytes)
    filled = {tp: samples.get(tp) or SizeSample(starts[tp], starts[tp]) for tp in tps}
    estimates = [estimate_bytes(filled[tp], latest[tp], fallback) for tp in tps]
    if sum(estimates) <= max_bytes:
        return ends
    total = sum(estimates)
    used = 0.0
    for tp, estimate in zip(tps, estimates):
        share = max_bytes * estimate / total
        ends[tp] = end_within_budget(filled[tp], share, latest[tp], fallback)
        used += estimate_bytes(filled[tp], ends[tp], fallback)
    for tp in tps:
        left = max_bytes - used
        if left <= 0:
            break
        before = estimate_bytes(filled[tp], ends[tp], fallback)
        ends[tp] = end_within_budget(filled[tp], before + left, latest[tp], fallback)
        used += estimate_bytes(filled[tp], ends[tp], fallback) - before
    if all(ends[tp] == starts[tp] for tp in tps):
        first = max(tps, key=lambda tp: latest[tp] - starts[tp])
        sample = filled[first]
        ends[first] = min(latest[first], sample.offsets[0] + 1 if sample.offsets else starts[first] + 1)
    return ends


# --- minPartitions / maxRecordsPerPartition -------------------------------------------------------


def split_ranges(
    ranges: Iterable[OffsetRange],
    *,
    min_partitions: int | None = None,
    max_records_per_partition: int | None = None,
) -> list[OffsetRange]:
    """Cut ranges into consecutive pieces, each read by its own task.

    With ``min_partitions`` larger than the number of ranges, the pieces are
    shared out in proportion to range sizes (every range keeps at least one
    piece, no piece is empty). ``max_records_per_partition`` then cuts any
    piece still spanning more offsets than that. Pieces of one range are as
    equal as whole offsets allow and together cover it exactly.
    """
    ranges = [r for r in ranges if r.size > 0]
    counts = [1] * len(ranges)
    if min_partitions is not None and len(ranges) < min_partitions:
        sizes = [r.size for r in ranges]
        extra = apportion(min_partitions - len(ranges), sizes, [s - 1 for s in sizes])
        counts = [1 + e for e in extra]
    if max_records_per_partition is not None:
        counts = [max(c, -(-r.size // max_records_per_partition)) for c, r in zip(counts, ranges)]
    pieces: list[OffsetRange] = []
    for r, count in zip(ranges, counts):
        pieces.extend(_split(r, count))
    return pieces


def _split(r: OffsetRange, count: int) -> list[OffsetRange]:
    count = max(1, min(count, r.size))
    base, bigger = divmod(r.size, count)
    pieces = []
    start = r.from_offset
    for i in range(count):
        end = start + base + (1 if i < bigger else 0)
        pieces.append(OffsetRange(r.topic, r.partition, start, end))
        start = end
    return pieces


# --- minRecordsPerPartition -----------------------------------------------------------------------


def coalesce_ranges(
    pieces: Iterable[OffsetRange], *, min_records: int, max_records: int | None = None
) -> list[list[OffsetRange]]:
    """Pack pieces shorter than ``min_records`` offsets into groups, each read by one task.

    A task costs a scheduling round trip and a Python worker's turn whatever
    it reads, so a micro-batch of a few records per partition is read faster
    by one task than by one per partition. A piece of ``min_records`` or more
    stays alone; smaller ones join a group until it spans ``min_records``
    offsets, never past ``max_records`` (``maxRecordsPerPartition``). Every
    piece lands in exactly one group, in the order given.
    """
    groups: list[list[OffsetRange]] = []
    open_group: list[OffsetRange] = []
    spanned = 0
    for piece in pieces:
        if piece.size >= min_records:
            groups.append([piece])
            continue
        if open_group and max_records is not None and spanned + piece.size > max_records:
            groups.append(open_group)
            open_group, spanned = [], 0
        open_group.append(piece)
        spanned += piece.size
        if spanned >= min_records:
            groups.append(open_group)
            open_group, spanned = [], 0
    if open_group:
        groups.append(open_group)
    return groups
