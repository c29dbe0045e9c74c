"""Kafka's tools run as a script would run them: ``bin/TOOL.sh`` in a child process, against a broker process.

The broker is a real ``spate broker start`` process shared by the module
(``running_broker``); groups on it form at once. ``kafka_tool(name, *args)``
runs ``bin/<name>`` with ``--bootstrap-server`` first, through the
repository's ``bin/spate-kafka-tool`` with this test's Python.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.spate.cli.conftest import Result
from tests.support.broker_process import BrokerProcess, running_broker

REPO_ROOT = Path(__file__).resolve().parents[4]
BIN = REPO_ROOT / "bin"
TOOL_TIMEOUT_S = 60
TOOLS_BROKER_OVERRIDES = {"group.initial.rebalance.delay.ms": "0", "num.partitions": "1"}


def tool_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SPATE_BOOTSTRAP_SERVER", "PYTHONPATH")}
    env["SPATE_PYTHON"] = sys.executable
    return env


def run_tool(name: str, *args: str, stdin: bytes = b"", timeout: float = TOOL_TIMEOUT_S) -> Result:
    done = subprocess.run([str(BIN / name), *args], input=stdin, capture_output=True, env=tool_env(),
                          timeout=timeout)
    return Result(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"))


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    process = BrokerProcess(data_dir=tmp_path_factory.mktemp("kafka-tools"), overrides=dict(TOOLS_BROKER_OVERRIDES))
    with running_broker(process) as running:
        yield running


@pytest.fixture
def kafka_tool(broker: BrokerProcess) -> Callable[..., Result]:
    def run(name: str, *args: str, stdin: bytes = b"", timeout: float = TOOL_TIMEOUT_S) -> Result:
        return run_tool(name, "--bootstrap-server", broker.bootstrap, *args, stdin=stdin, timeout=timeout)

    return run


@pytest.fixture
def topic() -> str:
    return f"topic-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def group() -> str:
    return f"group-{uuid.uuid4().hex[:8]}"
