"""A runner for the real ``spate`` command, and the one embedded broker every CLI test talks to.

``spate(*args, bootstrap=...)`` runs the command as a child process, as a
user would; ``assert_one_line_failure`` checks the failure contract of every
command (an exit code, one line on stderr, no traceback). The broker is a real
broker on a thread of the test process (``EmbeddedBroker``), shared by the
CLI tests; groups on it form at once and accept short sessions, for
``spate groups``. Each test creates topics of its own. Commands about
clusters of several brokers (elections, reassignments) run against
``fake_cluster``, a scripted cluster of three brokers (see
``tests.spate.client.admin.fake_cluster``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from broker_core.server.embedded import EmbeddedBroker
from spate.client import Admin, NewTopic
from tests.spate.client.admin.fake_cluster import FakeCluster, FakePartition
from tests.support.ports import free_port

COMMAND_TIMEOUT_S = 60
ADMIN_TIMEOUT_MS = 20_000
CLI_BROKER_OVERRIDES = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000"}


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str

    @property
    def stderr_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]


def spate(*args: str, bootstrap: str | None = None, stdin: bytes | None = None) -> Result:
    """Run ``spate ARGS`` as a child process, pointed at ``bootstrap`` through the environment."""
    env = {k: v for k, v in os.environ.items() if k != "SPATE_BOOTSTRAP_SERVER"}
    if bootstrap is not None:
        env["SPATE_BOOTSTRAP_SERVER"] = bootstrap
    done = subprocess.run(
        [sys.executable, "-m", "spate.cli.main", *args],
        input=stdin if stdin is not None else b"",
        capture_output=True, env=env, timeout=COMMAND_TIMEOUT_S,
    )
    return Result(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"))


def assert_one_line_failure(result: Result, exit_code: int, *fragments: str) -> None:
    assert result.returncode == exit_code, result
    assert "Traceback" not in result.stderr
    assert len(result.stderr_lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


@pytest.fixture(scope="package")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with EmbeddedBroker(tmp_path_factory.mktemp("cli-broker"), CLI_BROKER_OVERRIDES) as broker:
        yield broker.bootstrap_servers


# Short names keep each row of the command's tables on one line.
@pytest.fixture
def topic() -> str:
    return f"topic-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def group() -> str:
    return f"group-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def make_topic(bootstrap: str, topic: str) -> Callable[..., str]:
    """Create the test's topic directly through the client (setup, not the command under test)."""

    def create(partitions: int = 1, configs: dict[str, str] | None = None) -> str:
        with Admin(bootstrap, default_api_timeout_ms=ADMIN_TIMEOUT_MS) as admin:
            admin.create_topics(NewTopic(topic, num_partitions=partitions, configs=configs or {}))
        return topic

    return create


@pytest.fixture
def refused_address() -> str:
    """An address where nothing listens."""
    return f"127.0.0.1:{free_port()}"


@pytest.fixture
def fake_cluster() -> Iterator[FakeCluster]:
    """Brokers 0, 1 (the controller) and 2, broker 0 in rack ``rack-a``; topic ``orders`` has 3 partitions."""
    topics = {"orders": [FakePartition(0, (0, 1)), FakePartition(1, (1, 2)), FakePartition(2, (2, 0))]}
    with FakeCluster(brokers=(0, 1, 2), controller=1, racks={0: "rack-a"}, topics=topics) as fake:
        yield fake
