"""Spate: the package users import.

``from spate import Producer, Consumer, Admin, TopicPartition`` gives the
Python client; ``spate.protocol`` and ``spate.records`` are the Kafka wire
format (sans-IO) that the client and the broker share; ``spate.cli`` is the
``spate`` command.

Importing ``spate`` (or ``spate.protocol``) does not load the client: the
client's names are resolved on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from spate.structs import IsolationLevel, OffsetAndMetadata, OffsetAndTimestamp, TopicPartition

if TYPE_CHECKING:
    from spate.client import *  # noqa: F403

__all__ = ["IsolationLevel", "OffsetAndMetadata", "OffsetAndTimestamp", "TopicPartition"]


def __getattr__(name: str) -> Any:
    # PEP 562: the client's public names, loaded when first asked for.
    client = importlib.import_module("spate.client")
    if name in client.__all__:
        return getattr(client, name)
    raise AttributeError(f"module 'spate' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(importlib.import_module("spate.client").__all__))
