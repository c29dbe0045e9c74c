"""Who a consumer is in its group: group id, generation and member id."""

from __future__ import annotations

from dataclasses import dataclass

# A member that has not joined yet, or a commit from outside the group's membership.
NO_GENERATION = -1
NO_MEMBER_ID = ""


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadata:
    """Who a consumer is in its group; ``send_offsets_to_transaction`` takes it in place of a group id."""

    group_id: str
    generation_id: int = NO_GENERATION
    member_id: str = NO_MEMBER_ID
    group_instance_id: str | None = None
