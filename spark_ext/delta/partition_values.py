"""Partition values as the Delta log spells them, and the directories their files live in.

The Delta protocol stores each file's partition values as strings in its
``add`` action (``partitionValues``), null as JSON null; readers take the
values from there, never from the path. Files still go to Hive-style
directories (``date=2024-05-01/``) so the layout reads well: characters that
are not safe in a path are written ``%XX`` (as Hive escapes them); the
``add`` action's path, a relative URI, escapes the ``%`` once more (deltalake
does that when it writes the action).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

# Hive's name for the directory of a null partition value.
NULL_PARTITION_DIRECTORY = "__HIVE_DEFAULT_PARTITION__"
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


def serialize(value: Any) -> str | None:
    """A Python value of a partition column as the Delta protocol's partition value string."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        # Delta's timestamp partition values: UTC, microseconds, no zone suffix.
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return format(value, "f")
    return str(value)


def directory_name(column: str, value: str | None) -> str:
    """``column=value`` with the Hive escaping of path-unsafe characters."""
    text = NULL_PARTITION_DIRECTORY if value is None else _escape(value)
    return f"{_escape(column)}={text}"


def _escape(text: str) -> str:
    return "".join(ch if ch in _SAFE else "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in text)

