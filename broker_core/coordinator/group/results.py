"""What the group coordinator takes in and hands back, independent of wire versions.

Handlers translate between these and the protocol messages; the coordinator
never sees a request version except as the few flags that change behaviour
(``require_known_member_id`` for JoinGroup v4+).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from spate.protocol.errors import ErrorCode
from spate.structs import TopicPartition


@dataclass(frozen=True)
class JoinedMember:
    """A member as the group leader sees it in a JoinGroup response."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True)
class JoinGroupResult:
    error: ErrorCode
    member_id: str = ""
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str = ""
    # Filled in for the leader only: every member with its metadata for the chosen protocol.
    members: tuple[JoinedMember, ...] = ()


@dataclass(frozen=True)
class SyncGroupResult:
    error: ErrorCode
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


@dataclass(frozen=True)
class MemberIdentity:
    """One member named in a LeaveGroup request: by member id, instance id, or both."""

    member_id: str
    group_instance_id: str | None = None


@dataclass(frozen=True)
class MemberLeaveResult:
    member_id: str
    group_instance_id: str | None
    error: ErrorCode


@dataclass(frozen=True)
class LeaveGroupResult:
    error: ErrorCode
    members: tuple[MemberLeaveResult, ...] = ()


@dataclass(frozen=True)
class MemberDescription:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupDescription:
    group_id: str
    error: ErrorCode
    state: str = "Dead"
    protocol_type: str = ""
    # The chosen protocol while the group is Stable, else "".
    protocol_name: str = ""
    members: tuple[MemberDescription, ...] = ()


@dataclass(frozen=True)
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str
    group_type: str = "classic"  # or "consumer" (KIP-848)


@dataclass(frozen=True)
class ListGroupsResult:
    error: ErrorCode
    groups: tuple[ListedGroup, ...] = ()


@dataclass(frozen=True)
class OffsetCommitEntry:
    """One partition of an OffsetCommit request."""

    offset: int
    leader_epoch: int = -1
    metadata: str | None = ""


@dataclass(frozen=True)
class FetchedOffset:
    """A committed position as OffsetFetch returns it; offset -1 when there is none."""

    offset: int = -1
    leader_epoch: int = -1
    metadata: str = ""
    error: ErrorCode = ErrorCode.NONE


@dataclass(frozen=True)
class OffsetFetchResult:
    error: ErrorCode
    offsets: Mapping[TopicPartition, FetchedOffset] = field(default_factory=dict)


@dataclass(frozen=True)
class OffsetDeleteResult:
    error: ErrorCode
    partitions: Mapping[TopicPartition, ErrorCode] = field(default_factory=dict)
