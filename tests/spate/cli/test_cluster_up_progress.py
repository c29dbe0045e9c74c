"""``spate cluster up`` start-up progress: each child ready is reported; a bar only on a terminal, never in JSON."""

from __future__ import annotations

import time

import pytest

from spate.cli import cluster_up
from spate.cli.cluster_up import startup_progress
from spate.cli.local_cluster import LocalCluster
from tests.support.ports import free_port


def test_no_progress_bar_for_json_output_or_when_stderr_is_not_a_terminal(monkeypatch) -> None:
    monkeypatch.setattr(cluster_up, "stderr_is_terminal", lambda: True)
    with startup_progress(as_json=True) as on_progress:
        assert on_progress is None
    with startup_progress(as_json=False) as on_progress:
        assert callable(on_progress)
        on_progress(1, 3)
    monkeypatch.setattr(cluster_up, "stderr_is_terminal", lambda: False)
    with startup_progress(as_json=False) as on_progress:
        assert on_progress is None


@pytest.mark.integration
@pytest.mark.timeout(180)
def test_start_reports_zookeeper_then_each_broker_ready(tmp_path) -> None:
    cluster = LocalCluster(tmp_path / "cluster", 1, free_port(), free_port())
    seen: list[tuple[int, int]] = []
    try:
        assert cluster.start(time.monotonic() + 120, lambda: False, lambda ready, total: seen.append((ready, total)))
    finally:
        cluster.stop(20)
    assert seen == [(0, 2), (1, 2), (2, 2)]
