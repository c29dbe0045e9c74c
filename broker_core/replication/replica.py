"""The leader's view of one follower (Kafka's ``Replica``): how far its log reaches and when it was last caught up.

A follower tells the leader where its log ends with every fetch: it asks
from its log end offset, so it holds everything below. "Caught up" is
Kafka's rule, which keeps a follower in sync under a steady stream of
appends even though it never asks from the leader's very end:

* a fetch from the leader's log end offset (as it was at that fetch) means
  the follower was caught up at that fetch;
* a fetch from at least the leader's log end offset *at the previous fetch*
  means the follower was caught up at the previous fetch.

A follower is in sync while it was caught up within ``replica.lag.time.max.ms``
or its log ends where the leader's does. Only the partition's leader keeps
these states; they live on the broker's event loop, like the partition.
"""

from __future__ import annotations

from dataclasses import dataclass

UNKNOWN_OFFSET = -1


@dataclass(slots=True)
class FollowerState:
    """One follower as its leader saw it at its latest fetch."""

    broker_id: int
    log_end_offset: int = UNKNOWN_OFFSET  # unknown until its first fetch from this leader
    log_start_offset: int = UNKNOWN_OFFSET
    last_caught_up_ms: int = 0
    last_fetch_ms: int = 0
    # The leader's log end offset when this follower last fetched.
    last_fetch_leader_log_end_offset: int = UNKNOWN_OFFSET
    # The leader epoch this follower last fetched in: only a fetch in the current one may bring it into the ISR.
    last_fetch_leader_epoch: int = -1

    def update_fetch_state(
        self, fetch_offset: int, *, log_start_offset: int, fetch_ms: int, leader_end_offset: int, leader_epoch: int = -1
    ) -> None:
        """Record a fetch from ``fetch_offset`` in ``leader_epoch``; the leader's log ended at ``leader_end_offset``."""
        if fetch_offset >= leader_end_offset:
            self.last_caught_up_ms = max(self.last_caught_up_ms, fetch_ms)
        elif fetch_offset >= self.last_fetch_leader_log_end_offset:
            self.last_caught_up_ms = max(self.last_caught_up_ms, self.last_fetch_ms)
        self.log_end_offset = fetch_offset
        self.log_start_offset = log_start_offset
        self.last_fetch_leader_log_end_offset = max(leader_end_offset, self.last_fetch_leader_log_end_offset)
        self.last_fetch_ms = fetch_ms
        self.last_fetch_leader_epoch = leader_epoch

    def is_caught_up(self, leader_end_offset: int, now_ms: int, max_lag_ms: int) -> bool:
        """In sync: its log ends where the leader's does, or it was caught up within ``max_lag_ms``."""
        return self.log_end_offset == leader_end_offset or now_ms - self.last_caught_up_ms <= max_lag_ms

    def reset(self, *, now_ms: int, leader_end_offset: int, new_leader: bool, in_sync: bool) -> None:
        """The leadership changed (or a new leader epoch began): start this follower's clock again.

        An in-sync follower counts as caught up now, so it does not leave the
        ISR before it had a chance to fetch; one outside the ISR counts as
        never caught up, so it does not hold the high watermark back. A new
        leader knows nothing of where followers are; a leader re-elected
        keeps their positions.
        """
        self.last_caught_up_ms = now_ms if in_sync else 0
        if new_leader:
            self.log_end_offset = UNKNOWN_OFFSET
            self.log_start_offset = UNKNOWN_OFFSET
            self.last_fetch_leader_log_end_offset = UNKNOWN_OFFSET
            self.last_fetch_ms = 0
        else:
            self.last_fetch_leader_log_end_offset = leader_end_offset
            self.last_fetch_ms = now_ms if in_sync else 0
