"""One member of a classic consumer group, as the coordinator tracks it.

A member is *awaiting join* while its JoinGroup request is parked until the
rebalance completes, and *awaiting sync* while its SyncGroup request waits
for the leader's assignment. Both are callbacks that must be answered
exactly once; :meth:`GroupMetadata.take_join_callback` (the group counts the
members awaiting join) and :meth:`MemberMetadata.take_sync_callback` hand a
callback out and clear it in one step so no request is answered twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from broker_core.coordinator.group.results import JoinGroupResult, SyncGroupResult
from broker_core.coordinator.scheduler import TimerHandle

JoinCallback = Callable[[JoinGroupResult], None]
SyncCallback = Callable[[SyncGroupResult], None]

# The member id of a member joining for the first time (and of one a failed request removed).
UNKNOWN_MEMBER_ID = ""


@dataclass(frozen=True)
class Protocol:
    """An assignor a member supports, with its subscription metadata for that assignor."""

    name: str
    metadata: bytes


@dataclass(eq=False)
class MemberMetadata:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    # In the member's order of preference.
    protocols: tuple[Protocol, ...]
    assignment: bytes = b""
    # A member that joined for the first time and has not yet been through a
    # completed rebalance; it may be dropped while it still awaits its join.
    is_new: bool = False
    join_callback: JoinCallback | None = field(default=None, repr=False)
    sync_callback: SyncCallback | None = field(default=None, repr=False)
    heartbeat_timer: TimerHandle | None = field(default=None, repr=False)

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.join_callback is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.sync_callback is not None

    @property
    def protocol_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.protocols)

    def metadata_for(self, protocol_name: str) -> bytes:
        for protocol in self.protocols:
            if protocol.name == protocol_name:
                return protocol.metadata
        raise KeyError(f"member {self.member_id} does not support protocol {protocol_name!r}")

    def has_same_protocols(self, protocols: Sequence[Protocol]) -> bool:
        return self.protocols == tuple(protocols)

    def vote(self, candidates: set[str]) -> str:
        """The member's most preferred protocol among ``candidates``."""
        for protocol in self.protocols:
            if protocol.name in candidates:
                return protocol.name
        raise KeyError(f"member {self.member_id} supports none of {sorted(candidates)}")

    def take_sync_callback(self) -> SyncCallback | None:
        callback, self.sync_callback = self.sync_callback, None
        return callback

    def cancel_heartbeat(self) -> None:
        if self.heartbeat_timer is not None:
            self.heartbeat_timer.cancel()
            self.heartbeat_timer = None


@dataclass(frozen=True, slots=True)
class JoinRequest:
    """What one JoinGroup says about its member, carried through the steps of the join."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: tuple[Protocol, ...]
    respond: JoinCallback
