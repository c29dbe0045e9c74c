"""How many of a group's members support each protocol (Kafka's ``supportedProtocols``).

Every JoinGroup asks whether the joining member shares a protocol with all
the others. Counting over the members for each request would make a
rebalance of n members cost O(n²); the group instead keeps one count per
protocol name, adjusted when a member arrives, leaves or changes its
protocols, and the protocols all members share are those whose count is the
number of members.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable


class SupportedProtocols:
    """Counts per protocol name, one per member listing it (a name listed twice by a member counts once)."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()

    def add(self, names: Iterable[str]) -> None:
        self._counts.update(set(names))

    def remove(self, names: Iterable[str]) -> None:
        for name in set(names):
            self._counts[name] -= 1
            if self._counts[name] <= 0:
                del self._counts[name]

    def shared_by(self, member_count: int) -> set[str]:
        """The names every one of ``member_count`` counted members supports."""
        return {name for name, count in self._counts.items() if count == member_count}
