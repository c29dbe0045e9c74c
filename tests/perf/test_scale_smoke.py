"""The scale benchmarks (``python -m tests.perf.scale``) at a tiny size, so the suite keeps them working.

Figures are not checked here (they belong to the real run); what is checked
is that every section runs to its table, that nothing the benchmarks send
fails, and that both connection limits hold.
"""

from __future__ import annotations

import re

import pytest

from tests.perf import scale

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def test_every_scale_benchmark_runs_and_prints_its_table(capsys, tmp_path) -> None:
    scale.run_all(scale.SMOKE, tmp_path / "plots")
    out = capsys.readouterr().out
    for title in ("Partitions", "Connections", "Log size", "Consumer groups"):
        assert f"## {title}" in out
    spread = r"([\d.]+) \| [\d.]+ \| [\d.]+ \| [\d.]+ \| (\d+)"
    partitions_row = re.search(rf"^\| 10 \| {spread} \| {spread} \| \d+ \| \d+ \| [\d.]+ \|", out, re.M)
    assert partitions_row, out
    round_robin_mb, round_robin_written, in_runs_mb, in_runs_written = partitions_row.groups()
    assert float(round_robin_mb) > 0 and float(in_runs_mb) > 0
    assert int(round_robin_written) == 10 and int(in_runs_written) == 10
    connection_rows = re.findall(r"^\| (1|10) \| [\d.-]+ \| ([\d,]+) \| (\d+) \|", out, re.M)
    assert [(count, errors) for count, _, errors in connection_rows] == [("1", "0"), ("10", "0")]
    assert all(int(requests.replace(",", "")) > 0 for _, requests, _ in connection_rows)
    assert "`max.connections.per.ip=5`: connection 6 was reset by the broker" in out \
        or "`max.connections.per.ip=5`: connection 6 was closed by the broker" in out
    assert "`max.connections=5`: connection 6 was left waiting, then served once one of the 5 closed" in out
    assert re.search(r"^\| 10 \| \d+ \| [\d.]+ \| 0 \|", out, re.M)  # commits: no failure
    assert (tmp_path / "plots" / "partitions.png").stat().st_size > 0
    assert (tmp_path / "plots" / "log-growth.png").stat().st_size > 0
