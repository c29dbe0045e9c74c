"""``max.connections.per.ip.overrides``: per-host connection limits, written ``host:count,host:count``."""

from __future__ import annotations

from broker_core.config.definitions import ConfigValue, InvalidValue

FORMAT = "host:count,host:count (count at least 0)"


def parse_connection_overrides(text: str) -> dict[str, int]:
    """Host (name or address, as written) to its limit; InvalidValue for anything else."""
    overrides: dict[str, int] = {}
    for entry in (part.strip() for part in text.split(",")):
        if not entry:
            continue
        # rpartition: an IPv6 address has colons of its own; the count comes after the last one.
        host, colon, count = entry.rpartition(":")
        host = host.strip().strip("[]")
        if not colon or not host or not count.strip().isdigit():
            raise InvalidValue(f"{entry!r} is not host:count")
        if host in overrides:
            raise InvalidValue(f"host {host} is listed twice")
        overrides[host] = int(count)
    return overrides


def check_connection_overrides(value: ConfigValue) -> None:
    parse_connection_overrides(str(value))
