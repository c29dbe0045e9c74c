"""The timers of a rebalance (Kafka's InitialDelayedJoin, DelayedJoin and DelayedSync).

* *initial delay*: a group that was Empty waits ``group.initial.rebalance.delay.ms``
  before closing its first join phase, and waits once more (up to the
  rebalance timeout in all) each time a new member arrived meanwhile, so a
  starting fleet forms one generation instead of many;
* *join deadline*: the join phase closes after the rebalance timeout (the
  largest of the members') even if some members never rejoined;
* *sync deadline*: members of a new generation that have not sent SyncGroup
  within the rebalance timeout are dealt with.

A timer only acts if its group is still the one the coordinator holds and
still in the phase it was started for; what it then does is the callback
given when it was started. ``group.join_timer`` and ``group.sync_timer`` hold
the pending timers, so a group has at most one of each.
"""

from __future__ import annotations

from typing import Callable

from broker_core.coordinator.group.group_config import GroupConfig
from broker_core.coordinator.group.group_metadata import GroupMetadata, GroupState
from broker_core.coordinator.group.group_metadata_manager import GroupMetadataManager
from broker_core.coordinator.scheduler import Scheduler

S = GroupState

GroupCallback = Callable[[GroupMetadata], None]


class RebalanceTimers:
    def __init__(self, config: GroupConfig, groups: GroupMetadataManager, scheduler: Scheduler) -> None:
        self._config = config
        self._groups = groups
        self._scheduler = scheduler

    def _is_held(self, group: GroupMetadata) -> bool:
        return self._groups.get_group(group.group_id) is group

    # --- the join phase --------------------------------------------------------------------

    def start_initial_delay(self, group: GroupMetadata, on_done: GroupCallback) -> None:
        """Hold the join phase of a group that was Empty; ``on_done`` closes it."""
        delay = self._config.initial_rebalance_delay_ms
        self._initial_delay(group, delay, max(group.rebalance_timeout_ms - delay, 0), on_done)

    def _initial_delay(self, group: GroupMetadata, delay_ms: int, remaining_ms: int, on_done: GroupCallback) -> None:
        self.cancel_join(group)
        group.join_timer_is_initial_delay = True
        group.join_timer = self._scheduler.call_later(
            delay_ms, lambda: self._on_initial_delay(group, delay_ms, remaining_ms, on_done)
        )

    def _on_initial_delay(self, group: GroupMetadata, delay_ms: int, remaining_ms: int, on_done: GroupCallback) -> None:
        group.join_timer = None
        if not group.is_(S.PREPARING_REBALANCE) or not self._is_held(group):
            return
        if group.new_member_added and remaining_ms > 0:
            group.new_member_added = False
            next_delay = min(self._config.initial_rebalance_delay_ms, remaining_ms)
            self._initial_delay(group, next_delay, max(remaining_ms - delay_ms, 0), on_done)
        else:
            on_done(group)

    def start_join_deadline(self, group: GroupMetadata, on_expired: GroupCallback) -> None:
        """Close the join phase after the rebalance timeout at the latest."""
        self.cancel_join(group)
        group.join_timer_is_initial_delay = False
        group.join_timer = self._scheduler.call_later(
            group.rebalance_timeout_ms, lambda: self._on_join_deadline(group, on_expired)
        )

    def _on_join_deadline(self, group: GroupMetadata, on_expired: GroupCallback) -> None:
        group.join_timer = None
        if group.is_(S.PREPARING_REBALANCE) and self._is_held(group):
            on_expired(group)

    def cancel_join(self, group: GroupMetadata) -> None:
        if group.join_timer is not None:
            group.join_timer.cancel()
            group.join_timer = None

    # --- the sync phase --------------------------------------------------------------------

    def start_sync_deadline(self, group: GroupMetadata, on_expired: GroupCallback) -> None:
        """Call ``on_expired`` if the generation just formed is still current after the rebalance timeout."""
        generation = group.generation_id
        group.sync_timer = self._scheduler.call_later(
            group.rebalance_timeout_ms, lambda: self._on_sync_deadline(group, generation, on_expired)
        )

    def _on_sync_deadline(self, group: GroupMetadata, generation: int, on_expired: GroupCallback) -> None:
        group.sync_timer = None
        if generation == group.generation_id and self._is_held(group):
            on_expired(group)

    def cancel_sync(self, group: GroupMetadata) -> None:
        if group.sync_timer is not None:
            group.sync_timer.cancel()
            group.sync_timer = None

    def cancel_all(self, group: GroupMetadata) -> None:
        """Stop every rebalance timer of the group, pending member ids' expiry included (it is going away)."""
        self.cancel_join(group)
        self.cancel_sync(group)
        for timer in group.pending_members.values():
            if timer is not None:
                timer.cancel()
