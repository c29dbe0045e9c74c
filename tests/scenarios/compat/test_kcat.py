"""kcat (an older librdkafka) produces keyed lines and consumes them back unchanged.

kcat exercises the low ends of the advertised version ranges that newer
clients never send. It is skipped where the ``kcat`` binary is not installed.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict

import pytest

from tests.scenarios.compat.clients import CODECS, ConfluentDriver
from tests.support.broker_under_test import require_spate

KCAT = shutil.which("kcat")

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(60),
    pytest.mark.skipif(KCAT is None, reason="kcat is not installed (Debian package 'kcat')"),
]

LINES = 500
KEYS = 13
TANSU_KCAT_REASON = "its ApiVersions v3 reply has tagged fields that kcat's librdkafka 2.0 cannot skip (read underflow)"


def kcat(bootstrap: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [KCAT or "kcat", "-b", bootstrap, "-m", "10", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
    )
    if result.returncode != 0:
        raise AssertionError(f"kcat {' '.join(args)} exited {result.returncode}:\n{result.stderr[-2000:]}")
    return result


def by_key(lines: list[str]) -> dict[str, list[str]]:
    """Values of each key in the order they appear; a key always maps to one partition, so this order is kept."""
    values: dict[str, list[str]] = defaultdict(list)
    for line in lines:
        key, _, value = line.partition(":")
        values[key].append(value)
    return dict(values)


@pytest.mark.parametrize("codec", CODECS)
def test_kcat_reads_back_the_keyed_lines_it_produced(broker, broker_kind, topic_name, codec: str) -> None:
    require_spate(broker_kind, TANSU_KCAT_REASON)
    topic = topic_name()
    ConfluentDriver(broker.bootstrap).create_topic(topic, 3)
    sent = [f"key-{i % KEYS}:value {i} via kcat" for i in range(LINES)]

    kcat(
        broker.bootstrap, "-P", "-t", topic, "-K", ":", "-z", codec,
        "-X", "acks=all", "-X", "enable.idempotence=true",
        stdin="\n".join(sent) + "\n",
    )  # fmt: skip
    consumed = kcat(broker.bootstrap, "-C", "-t", topic, "-e", "-o", "beginning", "-K", ":").stdout.splitlines()

    assert sorted(consumed) == sorted(sent)
    assert by_key(consumed) == by_key(sent)
