"""``spate quotas alter|describe`` against a real broker: entities by name or default, Kafka's keys,
one-line refusals."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def spate(broker: BrokerProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "spate.cli.main", "quotas", *args, "--bootstrap-server",
                           broker.bootstrap], capture_output=True, text=True, timeout=60)


def test_quotas_set_per_entity_and_default_are_described(broker: BrokerProcess) -> None:
    for entity, add in [(["--user", "cli-alice", "--client-id", "etl"], "producer_byte_rate=1048576"),
                        (["--user-defaults"], "consumer_byte_rate=2097152"),
                        (["--client-id", "<default>"], "request_percentage=25.5")]:
        done = spate(broker, "alter", *entity, "--add", add)
        assert done.returncode == 0, done.stderr
    one = spate(broker, "describe", "--user", "cli-alice", "--client-id", "etl")
    assert one.stdout == "user=cli-alice, client-id=etl\tproducer_byte_rate=1048576\n"
    every = json.loads(spate(broker, "describe", "--output", "json").stdout)
    assert {"entity": {"user": "<default>"}, "quotas": {"consumer_byte_rate": 2097152.0}} in every
    assert {"entity": {"client-id": "<default>"}, "quotas": {"request_percentage": 25.5}} in every

    assert spate(broker, "alter", "--user-defaults", "--delete", "consumer_byte_rate").returncode == 0
    assert spate(broker, "describe", "--user", "<default>").stdout == ""


def test_refusals_are_one_line_naming_the_problem(broker: BrokerProcess) -> None:
    unknown = spate(broker, "alter", "--user", "x", "--add", "fetch_rate=1")
    assert unknown.returncode == 1 and "INVALID_REQUEST" in unknown.stderr and "fetch_rate" in unknown.stderr
    assert len(unknown.stderr.strip().splitlines()) == 1
    no_entity = spate(broker, "alter", "--add", "producer_byte_rate=1")
    assert no_entity.returncode == 2 and "--user" in no_entity.stderr
    not_a_number = spate(broker, "alter", "--user", "x", "--add", "producer_byte_rate=fast")
    assert not_a_number.returncode == 2 and "must be a number" in not_a_number.stderr
