"""One embedded broker per test module, and a runner for the real ``spate`` command."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from broker_core.server.embedded import EmbeddedBroker

COMMAND_TIMEOUT_S = 60


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str

    @property
    def stderr_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory) -> Iterator[str]:
    with EmbeddedBroker(tmp_path_factory.mktemp("broker")) as broker:
        yield broker.bootstrap_servers


@pytest.fixture
def topic_name() -> str:
    return f"cli-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def refused_address() -> str:
    """An address where nothing listens."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


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


@pytest.fixture
def make_topic(bootstrap, topic_name):
    """Create the test's topic directly through the client (setup, not the command under test)."""
    from spate.client import Admin, NewTopic

    def create(partitions: int = 1, configs: dict[str, str] | None = None) -> str:
        with Admin(bootstrap) as admin:
            admin.create_topics(NewTopic(topic_name, num_partitions=partitions, configs=configs or {}))
        return topic_name

    return create
