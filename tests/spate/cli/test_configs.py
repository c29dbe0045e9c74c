"""``spate configs describe|alter``: dynamic broker configs against a real broker."""

from __future__ import annotations

import json

import pytest

from tests.spate.cli.conftest import assert_one_line_failure, spate

pytestmark = pytest.mark.integration


def test_configs_alter_then_describe_a_broker(bootstrap) -> None:
    altered = spate("configs", "alter", "--broker", "0", "--set", "log.cleaner.backoff.ms=20000",
                    "--set", "background.threads=9", bootstrap=bootstrap)
    assert altered.returncode == 0, altered
    assert altered.stdout.strip() == "configs of broker 0 updated"
    try:
        described = spate("configs", "describe", "--broker", "0", bootstrap=bootstrap)
        assert described.returncode == 0, described
        assert described.stdout.splitlines() == [
            "background.threads=9 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:background.threads=9, "
            "DEFAULT_CONFIG:background.threads=10}",
            "log.cleaner.backoff.ms=20000 sensitive=false synonyms={"
            "DYNAMIC_BROKER_CONFIG:log.cleaner.backoff.ms=20000, DEFAULT_CONFIG:log.cleaner.backoff.ms=15000}",
        ]
        as_json = json.loads(spate("configs", "describe", "--broker", "0", "--output", "json",
                                   bootstrap=bootstrap).stdout)
        assert {e["name"]: (e["value"], e["source"]) for e in as_json} == {
            "background.threads": ("9", "DYNAMIC_BROKER_CONFIG"),
            "log.cleaner.backoff.ms": ("20000", "DYNAMIC_BROKER_CONFIG"),
        }
    finally:
        removed = spate("configs", "alter", "--broker", "0", "--delete", "log.cleaner.backoff.ms",
                        "--delete", "background.threads", bootstrap=bootstrap)
    assert removed.returncode == 0, removed
    assert spate("configs", "describe", "--broker", "0", bootstrap=bootstrap).stdout == ""


def test_a_static_config_is_refused_with_kafkas_message(bootstrap) -> None:
    result = spate("configs", "alter", "--broker-defaults", "--set", "num.partitions=3", bootstrap=bootstrap)
    assert_one_line_failure(result, 1, "INVALID_CONFIG", "Cannot update these configs dynamically: num.partitions")


def test_configs_alter_needs_a_change(bootstrap) -> None:
    result = spate("configs", "alter", "--broker", "0", bootstrap=bootstrap)
    assert_one_line_failure(result, 2, "nothing to change")
