"""Where a follower's log stops agreeing with its leader's (KIP-101 and KIP-279).

A new follower, or one whose leader changed, may hold batches the leader
never had (written by an old leader, or by itself as leader, and never
committed). Before fetching, it asks the leader where the follower's latest
leader epoch ended on the leader (OffsetForLeaderEpoch) and cuts its own log
there. The leader answers with the largest epoch at or below the one asked
and where that epoch ended; when the follower does not hold that epoch, the
two logs split earlier still, so the follower cuts back to the end of its
own entry for it and asks again with its (now older) latest epoch, until
both name the same epoch (Kafka's loop). Everything here is pure: the
caller brings the answers and applies the result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


@dataclass(frozen=True, slots=True)
class OffsetTruncationState:
    """Truncate the log to ``offset``; ``truncation_completed`` False: ask the leader again afterwards."""

    offset: int
    truncation_completed: bool


def offset_truncation_state(
    *,
    leader_epoch: int,
    leader_end_offset: int,
    replica_end_offset: int,
    initial_fetch_offset: int,
    follower_end_offset_for: Callable[[int], tuple[int, int]],
) -> OffsetTruncationState:
    """Where to truncate, given the leader's answer ``(leader_epoch, leader_end_offset)``.

    ``follower_end_offset_for(epoch)`` is this replica's own epoch cache
    answer for ``epoch`` (``(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)``
    when it holds no epoch at or below it). ``initial_fetch_offset`` is where
    fetching would start without epochs (the follower's high watermark).
    The result is never past ``replica_end_offset``.
    """
    if leader_end_offset == UNDEFINED_EPOCH_OFFSET:
        # The leader knows no such epoch (it has none, or none this old): fall back to the high watermark.
        return OffsetTruncationState(min(initial_fetch_offset, replica_end_offset), True)
    if leader_epoch == UNDEFINED_EPOCH:
        # An answer without an epoch: the leader's end offset is all there is to go by.
        return OffsetTruncationState(min(leader_end_offset, replica_end_offset), True)
    follower_epoch, follower_end_offset = follower_end_offset_for(leader_epoch)
    if follower_epoch == UNDEFINED_EPOCH or follower_end_offset == UNDEFINED_EPOCH_OFFSET:
        # The follower has no epoch this old (its log starts later); the leader's answer is below ours.
        return OffsetTruncationState(min(leader_end_offset, replica_end_offset), True)
    if follower_epoch != leader_epoch:
        # The follower never had the leader's epoch: cut to the end of the largest epoch below it, ask again.
        return OffsetTruncationState(min(follower_end_offset, replica_end_offset), False)
    return OffsetTruncationState(min(follower_end_offset, leader_end_offset, replica_end_offset), True)
