"""Deterministic records to send, and the check that what came back is what was sent."""

from __future__ import annotations

import random
import time
from collections import defaultdict

from tests.scenarios.compat.clients import ConsumedRecord, OutgoingRecord, Placement

# Keep producer timestamps within the broker's default retention (7 days) and
# not in the future, so neither time-based retention nor timestamp validation
# can touch them while a test runs.
TIMESTAMP_SPREAD_MS = 10 * 60 * 1000


def recent_base_ms() -> int:
    return int(time.time() * 1000) - 60 * 60 * 1000


def keyed_records(count: int, *, seed: int, tag: str, base_ms: int | None = None) -> list[OutgoingRecord]:
    """``count`` keyed records: repeating keys, varied values (null, empty, text, binary), headers, shuffled timestamps.

    Timestamps are deliberately not monotonic: CreateTime is whatever the
    producer says, and the broker must store it as given.
    """
    rng = random.Random(seed)
    base = recent_base_ms() if base_ms is None else base_ms
    records = []
    for i in range(count):
        kind = i % 10
        if kind == 0:
            value: bytes | None = None
        elif kind == 1:
            value = b""
        elif kind < 6:
            value = (f"{tag} record {i} " * rng.randint(1, 12)).encode()
        else:
            value = rng.randbytes(rng.randint(1, 300))
        headers: tuple[tuple[str, bytes], ...] = (("seq", str(i).encode()), ("tag", tag.encode()))
        if i % 7 == 0:
            headers += (("seq", b""),)  # repeated key, empty value: order and both entries must survive
        records.append(
            OutgoingRecord(
                key=f"key-{rng.randrange(max(1, count // 20)):05d}".encode(),
                value=value,
                headers=headers,
                timestamp_ms=base + rng.randrange(TIMESTAMP_SPREAD_MS),
            )
        )
    return records


def check_read_back(sent: list[OutgoingRecord], placements: list[Placement], consumed: list[ConsumedRecord]) -> None:
    """Everything acknowledged comes back once, unchanged, at its acknowledged offset, in send order per partition."""
    if len(placements) != len(sent):
        raise AssertionError(f"{len(placements)} acknowledgements for {len(sent)} records")
    by_position = {(r.partition, r.offset): r for r in consumed}
    if len(by_position) != len(consumed):
        raise AssertionError("the same partition/offset was delivered more than once")
    acknowledged = {(p.partition, p.offset) for p in placements}
    if len(acknowledged) != len(placements):
        raise AssertionError("two records were acknowledged at the same partition/offset")
    missing = acknowledged - by_position.keys()
    extra = by_position.keys() - acknowledged
    if missing or extra:
        raise AssertionError(
            f"missing {sorted(missing)[:10]} ({len(missing)}), unexpected {sorted(extra)[:10]} ({len(extra)})"
        )

    offsets_in_send_order: dict[int, list[int]] = defaultdict(list)
    for index, (record, placement) in enumerate(zip(sent, placements, strict=True)):
        got = by_position[(placement.partition, placement.offset)]
        expected = (record.key, record.value, record.headers, record.timestamp_ms, True)
        actual = (got.key, got.value, got.headers, got.timestamp_ms, got.create_time)
        if actual != expected:
            raise AssertionError(f"record #{index} at {placement}: sent {expected!r}, read {actual!r}")
        offsets_in_send_order[placement.partition].append(placement.offset)

    for partition, offsets in offsets_in_send_order.items():
        if offsets != sorted(offsets):
            raise AssertionError(f"partition {partition}: offsets do not follow send order")
        # A fresh topic without transactions or compaction has no gaps.
        if offsets != list(range(len(offsets))):
            raise AssertionError(f"partition {partition}: offsets {offsets[:5]}... are not 0..{len(offsets) - 1}")
    # The consumer itself must deliver each partition in offset order.
    for partition in offsets_in_send_order:
        read = [r.offset for r in consumed if r.partition == partition]
        if read != sorted(read):
            raise AssertionError(f"partition {partition}: consumer delivered offsets out of order")


def end_offsets(placements: list[Placement]) -> dict[int, int]:
    """Per partition, one past the highest acknowledged offset."""
    ends: dict[int, int] = {}
    for p in placements:
        ends[p.partition] = max(ends.get(p.partition, 0), p.offset + 1)
    return ends
