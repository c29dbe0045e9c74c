"""``spate cluster describe`` against a real broker."""

from __future__ import annotations

import re

import pytest

from tests.spate.cli.conftest import assert_one_line_failure, spate
from tests.spate.cli.output import table_row

pytestmark = pytest.mark.integration


def test_cluster_describe_shows_cluster_id_controller_brokers_and_topic_count(bootstrap, make_topic) -> None:
    make_topic(1)
    result = spate("cluster", "describe", bootstrap=bootstrap)
    assert result.returncode == 0, result
    assert re.search(r"Cluster id: \S+", result.stdout)
    host, port = bootstrap.split(":")
    assert f"Controller: 0 ({bootstrap})" in result.stdout
    assert table_row(result.stdout, "0") == ["0", host, port, "yes"]
    assert int(re.search(r"Topics: (\d+)", result.stdout).group(1)) >= 1


def test_cluster_describe_against_an_unreachable_broker_fails_with_one_line(refused_address) -> None:
    result = spate("cluster", "describe", "--api-timeout-ms", "500", bootstrap=refused_address)
    assert_one_line_failure(result, 1, refused_address)
