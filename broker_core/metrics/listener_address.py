"""The ``metrics.http.listener`` property: where a broker serves ``GET /metrics``.

The value is ``http://host:port`` (port 0 takes a free port; an IPv6 host is
written in brackets). Empty or unset turns the endpoint off. Parsing is
pure, so the configuration checks it when it is read and a bad value stops
the broker before anything starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from broker_core.config.definitions import InvalidValue

PROPERTY = "metrics.http.listener"
FORMAT = "empty, or http://host:port (port 0 takes a free port)"
_URL = re.compile(r"http://(?:\[(?P<ipv6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9_.-]*)):(?P<port>\d+)/?")


@dataclass(frozen=True)
class MetricsListener:
    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"


def parse_metrics_listener(value: str | None) -> MetricsListener | None:
    """The listener ``value`` names, None when it is empty; raises :class:`InvalidValue` for anything else."""
    if value is None or not value.strip():
        return None
    match = _URL.fullmatch(value.strip())
    if match is None:
        raise InvalidValue(f"{value!r} is not http://host:port")
    port = int(match.group("port"))
    if port > 65535:
        raise InvalidValue(f"port {port} is out of range 0..65535")
    host = match.group("ipv6") or match.group("host") or "0.0.0.0"
    return MetricsListener(host, port)


def check_metrics_listener(value: object) -> None:
    """Validator of ``metrics.http.listener``."""
    if isinstance(value, str):
        parse_metrics_listener(value)
