"""Reading the message browser's query string: partition, offset or time, limit, format."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Mapping

from spate.console.actions import ActionRefused
from spate.console.cluster_view import BROWSE_LIMIT_MAX
from spate.console.message_pages import BrowseQuery
from spate.console.rendering import FORMATS


def parse_timestamp(text: str) -> int:
    """Milliseconds since the epoch, given as a number or an ISO-8601 time (no zone: UTC)."""
    text = text.strip()
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ActionRefused(f"time {text!r} is neither milliseconds nor an ISO-8601 date-time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def _int(query: Mapping[str, str], name: str) -> int | None:
    text = query.get(name, "").strip()
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        raise ActionRefused(f"{name} must be a whole number, not {text!r}") from None
    if value < 0:
        raise ActionRefused(f"{name} must not be negative, not {value}")
    return value


def parse_browse_query(query: Mapping[str, str]) -> BrowseQuery:
    fmt = query.get("format", "auto") or "auto"
    if fmt not in FORMATS:
        raise ActionRefused(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    timestamp = query.get("timestamp", "").strip()
    limit = _int(query, "limit") or 50
    return BrowseQuery(
        partition=_int(query, "partition") or 0,
        offset=_int(query, "offset"),
        timestamp_ms=parse_timestamp(timestamp) if timestamp else None,
        limit=min(max(limit, 1), BROWSE_LIMIT_MAX),
        format=fmt,
    )
