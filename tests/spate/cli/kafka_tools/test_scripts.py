"""The tools as operators install them: ``bin/`` scripts and console scripts, and an existing script run unchanged."""

from __future__ import annotations

import os
import subprocess
import tomllib

import pytest

from spate.cli.kafka_tools import TOOLS
from tests.spate.cli.kafka_tools.conftest import BIN, REPO_ROOT, run_tool, tool_env

OPERATOR_SCRIPT = """\
#!/bin/sh
# What an operator's provisioning script does with Kafka's tools.
set -e
BOOTSTRAP=$1
TOPIC=$2
kafka-topics.sh --bootstrap-server "$BOOTSTRAP" --create --topic "$TOPIC" --partitions 3 --replication-factor 1 \\
    --config retention.ms=86400000
kafka-topics.sh --bootstrap-server "$BOOTSTRAP" --list | grep -qx "$TOPIC"
COUNT=$(kafka-topics.sh --bootstrap-server "$BOOTSTRAP" --describe --topic "$TOPIC" \\
    | awk -F'\\t' '/PartitionCount/ { split($2, f, ": "); print f[2] }')
[ "$COUNT" = 3 ] || { echo "unexpected partition count: $COUNT" >&2; exit 1; }
echo "provisioned $TOPIC with $COUNT partitions"
"""


def test_every_tool_has_a_bin_script_and_a_console_script() -> None:
    scripts = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    for name, module in TOOLS.items():
        assert os.access(BIN / name, os.X_OK), name
        assert scripts[name] == f"spate.cli.kafka_tools.{module}:run"


def test_help_describes_each_tool() -> None:
    for name in TOOLS:
        result = run_tool(name, "--help")
        assert result.returncode == 0, result
        assert "--bootstrap-server" in result.stdout


def test_an_unknown_tool_name_is_refused() -> None:
    done = subprocess.run([str(BIN / "spate-kafka-tool"), "kafka-storage.sh"], capture_output=True, env=tool_env(),
                          timeout=60)
    assert done.returncode == 1
    assert b"unknown tool 'kafka-storage.sh'" in done.stderr


def test_a_tool_without_a_bootstrap_server_says_so() -> None:
    result = run_tool("kafka-topics.sh", "--list")
    assert result.returncode == 1
    assert "bootstrap-server" in result.stderr


@pytest.mark.integration
def test_an_operators_kafka_topics_script_runs_unchanged(broker, topic, tmp_path) -> None:
    script = tmp_path / "provision.sh"
    script.write_text(OPERATOR_SCRIPT)
    env = tool_env()
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(["sh", str(script), broker.bootstrap, topic], capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip().endswith(f"provisioned {topic} with 3 partitions")
