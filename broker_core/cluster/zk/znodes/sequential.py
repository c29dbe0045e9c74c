"""Sequential znodes: notifications created with ``sequence=True`` under a parent, consumed by whoever watches it."""

from __future__ import annotations

from typing import ClassVar


class SequentialZNode:
    """A child of ``PARENT`` named ``PREFIX`` followed by the 10-digit sequence number ZooKeeper appends."""

    PARENT: ClassVar[str]
    PREFIX: ClassVar[str]

    @classmethod
    def create_path(cls) -> str:
        """The path to create with ``sequence=True``."""
        return f"{cls.PARENT}/{cls.PREFIX}"

    @classmethod
    def path(cls, name: str) -> str:
        """The path of the child named ``name`` (prefix and sequence number)."""
        return f"{cls.PARENT}/{name}"
