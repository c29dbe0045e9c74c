"""Which old segments a log may delete, and why.

Three rules, as in Kafka, each deleting a prefix of the segments:

* log start offset: a segment goes once the next segment starts at or below
  the log start offset (DeleteRecords or a follower's leader moved it);
* ``retention.ms``: while the oldest segment's largest timestamp is more than
  ``retention.ms`` in the past;
* ``retention.bytes``: while the log without the oldest segment would still
  be at least ``retention.bytes`` large.

The time and size rules apply only when ``cleanup.policy`` includes
``delete``. The active (last) segment is never a candidate, nor is a segment
whose successor starts above ``upper_bound_offset`` (the high watermark), so
nothing a consumer cannot see yet is deleted. The functions are pure; the log
applies their answer.

An archiving topic (``spate.archive.path`` set) adds a bound of its own: the
time and size rules claim only segments whose successor starts at or below
the partition's archived offset (everything below it is in the topic's Delta
archive). A topic whose archive job stopped therefore keeps its segments and
fills its disk rather than losing records; the log start offset rule stays
unbounded (DeleteRecords is an explicit request, and a follower follows its
leader's log start offset, which the leader only moves past archived data).
:func:`retention_target` is where the time and size rules would bring the
log start without that bound: what an archive job must copy first.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Sequence


class DeletionReason(enum.Enum):
    LOG_START_OFFSET = "log start offset"
    RETENTION_MS = "retention.ms"
    RETENTION_BYTES = "retention.bytes"


@dataclass(frozen=True, slots=True)
class RetentionCandidate:
    """A non-active segment: its size, age and where the next segment starts."""

    base_offset: int
    size: int
    largest_timestamp: int
    next_segment_base_offset: int


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    retention_ms: int
    retention_bytes: int
    delete_enabled: bool


def deletable_prefix(
    candidates: Sequence[RetentionCandidate],
    *,
    policy: RetentionPolicy,
    now_ms: int,
    log_start_offset: int,
    total_size: int,
    upper_bound_offset: int | None = None,
    archived_offset: int | None = None,
) -> list[tuple[RetentionCandidate, DeletionReason]]:
    """The oldest segments to delete, each with the first rule that claims it.

    ``candidates`` are every segment but the active one, oldest first;
    ``total_size`` is the whole log's size, active segment included;
    ``archived_offset`` (None: the topic does not archive) bounds the time
    and size rules.
    """
    eligible = _below_upper_bound(candidates, upper_bound_offset)
    reasons: list[DeletionReason | None] = [None] * len(eligible)

    for i, candidate in enumerate(eligible):
        if candidate.next_segment_base_offset > log_start_offset:
            break
        reasons[i] = DeletionReason.LOG_START_OFFSET

    archived = len(eligible) if archived_offset is None else len(_below_upper_bound(eligible, archived_offset))
    eligible_by_policy = eligible[:archived]

    if policy.delete_enabled and policy.retention_ms >= 0:
        for i, candidate in enumerate(eligible_by_policy):
            if now_ms - candidate.largest_timestamp <= policy.retention_ms:
                break
            reasons[i] = reasons[i] or DeletionReason.RETENTION_MS

    if policy.delete_enabled and policy.retention_bytes >= 0:
        excess = total_size - policy.retention_bytes
        for i, candidate in enumerate(eligible_by_policy):
            if excess - candidate.size < 0:
                break
            excess -= candidate.size
            reasons[i] = reasons[i] or DeletionReason.RETENTION_BYTES

    result: list[tuple[RetentionCandidate, DeletionReason]] = []
    for candidate, reason in zip(eligible, reasons):
        if reason is None:
            break
        result.append((candidate, reason))
    return result


def retention_target(
    candidates: Sequence[RetentionCandidate],
    *,
    policy: RetentionPolicy,
    now_ms: int,
    log_start_offset: int,
    total_size: int,
    upper_bound_offset: int | None = None,
) -> int:
    """The offset the log would start at once retention ran, were nothing held back for the archive.

    An archive job copies every record below it before telling the broker
    its archived offset; it never falls below ``log_start_offset``.
    """
    chosen = deletable_prefix(candidates, policy=policy, now_ms=now_ms, log_start_offset=log_start_offset,
                              total_size=total_size, upper_bound_offset=upper_bound_offset)
    if not chosen:
        return log_start_offset
    return max(log_start_offset, chosen[-1][0].next_segment_base_offset)


def _below_upper_bound(
    candidates: Sequence[RetentionCandidate], upper_bound_offset: int | None
) -> Sequence[RetentionCandidate]:
    if upper_bound_offset is None:
        return candidates
    kept = 0
    for candidate in candidates:
        if candidate.next_segment_base_offset > upper_bound_offset:
            break
        kept += 1
    return candidates[:kept]
