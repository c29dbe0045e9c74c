"""Where a follower truncates, from the leader's OffsetForLeaderEpoch answer and its own epoch cache (KIP-279)."""

from __future__ import annotations

import pytest

from broker_core.replication.truncation import OffsetTruncationState, offset_truncation_state

UNDEFINED = (-1, -1)


def follower_cache(entries: dict[int, int], log_end: int):
    """``end_offset_for`` of a follower cache {epoch: start offset}, as ``LeaderEpochFileCache`` answers."""

    def end_offset_for(epoch: int) -> tuple[int, int]:
        epochs = sorted(entries)
        if not epochs or epoch < 0:
            return UNDEFINED
        if epoch == epochs[-1]:
            return epoch, log_end
        higher = [e for e in epochs if e > epoch]
        if not higher:
            return UNDEFINED
        lower = [e for e in epochs if e <= epoch]
        return (lower[-1] if lower else epoch), entries[higher[0]]

    return end_offset_for


@pytest.mark.parametrize(
    ("leader", "cache", "log_end", "hw", "expected"),
    [
        # Same epoch: the smaller of the two ends.
        ((3, 50), {1: 0, 3: 20}, 60, 40, OffsetTruncationState(50, True)),
        ((3, 70), {1: 0, 3: 20}, 60, 40, OffsetTruncationState(60, True)),
        # The leader answers an older epoch (it never had ours) that the follower holds too.
        ((1, 15), {1: 0, 3: 20}, 60, 40, OffsetTruncationState(15, True)),
        # The leader answers an epoch the follower never had: cut to the end of the follower's epoch below it.
        ((2, 30), {1: 0, 3: 20}, 60, 40, OffsetTruncationState(20, False)),
        # The follower has no epoch that old: the leader's end offset.
        ((1, 5), {3: 20}, 60, 40, OffsetTruncationState(5, True)),
        # The leader has no such epoch at all: the high watermark.
        ((-1, -1), {1: 0}, 60, 40, OffsetTruncationState(40, True)),
        # An answer without an epoch: the leader's end offset.
        ((-1, 30), {1: 0}, 60, 40, OffsetTruncationState(30, True)),
    ],
)
def test_truncation_offset(leader, cache, log_end, hw, expected) -> None:
    epoch, end = leader
    assert offset_truncation_state(
        leader_epoch=epoch, leader_end_offset=end, replica_end_offset=log_end, initial_fetch_offset=hw,
        follower_end_offset_for=follower_cache(cache, log_end),
    ) == expected


def test_truncation_never_goes_past_the_followers_log_end() -> None:
    state = offset_truncation_state(leader_epoch=-1, leader_end_offset=-1, replica_end_offset=10,
                                    initial_fetch_offset=25, follower_end_offset_for=lambda e: UNDEFINED)
    assert state == OffsetTruncationState(10, True)
