"""The classic consumer-group coordinator and the committed offsets it stores.

Public entry points: :class:`GroupCoordinator` (the group APIs),
:class:`GroupConfig` (its settings), :class:`OffsetsTopic` (what it needs of
``__consumer_offsets``), and the result types in ``results``.
"""

from broker_core.coordinator.group.group_config import GroupConfig
from broker_core.coordinator.group.group_coordinator import GroupCoordinator
from broker_core.coordinator.group.group_metadata import GroupState, IllegalGroupStateTransition
from broker_core.coordinator.group.member import Protocol
from broker_core.coordinator.group.offsets_topic import OffsetsTopic

__all__ = [
    "GroupConfig",
    "GroupCoordinator",
    "GroupState",
    "IllegalGroupStateTransition",
    "OffsetsTopic",
    "Protocol",
]
