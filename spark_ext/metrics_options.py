"""The options that turn on a query's Prometheus metrics, shared by the source and the sink.

``metricsPort`` (unset: no metrics), ``metricsHost`` (default 127.0.0.1:
where the endpoint listens and every process reports) and ``metricsQuery``
(the ``query`` label; each side has its default).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from spark_ext.kafka_options import OptionError
from spark_ext.query_metrics import DEFAULT_HOST, MetricsTarget

NAMES = ("metricsPort", "metricsHost", "metricsQuery")


@dataclass(frozen=True)
class MetricsOptions:
    host: str
    port: int
    query: str | None

    def target(self, default_query: str) -> MetricsTarget:
        return MetricsTarget(self.host, self.port, self.query or default_query)


def parse_metrics_options(opts: Mapping[str, str], error: type[OptionError]) -> MetricsOptions | None:
    """``opts``: lower-cased names. None when ``metricsPort`` is not set."""
    port_text = opts.get("metricsport", "").strip()
    if not port_text:
        for name in ("metricshost", "metricsquery"):
            if opts.get(name, "").strip():
                raise error(NAMES[1] if name == "metricshost" else NAMES[2], "needs metricsPort")
        return None
    try:
        port = int(port_text)
    except ValueError:
        raise error("metricsPort", f"{port_text!r} is not a port number") from None
    if not 1 <= port <= 65535:
        # Every process of the query must find the same endpoint, so the port is fixed (no 0).
        raise error("metricsPort", f"{port} is out of range 1..65535")
    host = opts.get("metricshost", "").strip() or DEFAULT_HOST
    return MetricsOptions(host, port, opts.get("metricsquery", "").strip() or None)
