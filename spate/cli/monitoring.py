"""``spate cluster up --monitoring``: every broker serves /metrics, and Prometheus is told where.

Each broker gets a free port for ``metrics.http.listener`` (chosen at start,
on 127.0.0.1). Once the cluster is up, ``DATA_DIR/prometheus.yml`` holds a
scrape config naming those targets, and the command prints where to point
Prometheus and which dashboard to load into Grafana.
"""

from __future__ import annotations

import socket
from pathlib import Path

# The shipped dashboard, when running from a checkout of the repository.
DASHBOARD = Path(__file__).resolve().parents[2] / "platform" / "grafana" / "dashboards" / "spate.json"
SCRAPE_INTERVAL = "5s"


def free_ports(count: int, avoid: set[int] = frozenset()) -> list[int]:
    """``count`` distinct ports on 127.0.0.1 that nothing listens on now, none of them in ``avoid``."""
    ports: list[int] = []
    for _ in range(count * 20):
        if len(ports) == count:
            break
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if port not in avoid and port not in ports:
            ports.append(port)
    if len(ports) < count:
        raise OSError(f"found only {len(ports)} of {count} free ports for the brokers' metrics")
    return ports


def metrics_urls(ports: list[int]) -> list[str]:
    return [f"http://127.0.0.1:{port}/metrics" for port in ports]


def prometheus_config(ports: list[int]) -> str:
    targets = "\n".join(f"          - 127.0.0.1:{port}" for port in ports)
    return (
        "# Written by `spate cluster up --monitoring`: the brokers' /metrics endpoints.\n"
        f"global:\n  scrape_interval: {SCRAPE_INTERVAL}\n\n"
        "scrape_configs:\n  - job_name: spate\n    metrics_path: /metrics\n    static_configs:\n"
        f"      - targets:\n{targets}\n"
    )


def write_prometheus_config(data_dir: Path, ports: list[int]) -> Path:
    path = data_dir / "prometheus.yml"
    path.write_text(prometheus_config(ports))
    return path


def where_to_look(ports: list[int], config_path: Path) -> str:
    """What the command prints once the cluster is up."""
    lines = [f"spate: metrics: {', '.join(metrics_urls(ports))}",
             f"spate: Prometheus: prometheus --config.file={config_path}"]
    if DASHBOARD.is_file():
        lines.append(f"spate: Grafana: import {DASHBOARD} (data source: that Prometheus, http://127.0.0.1:9090)")
    return "\n".join(lines)
