"""Which broker implementation a suite runs against, and Tansu's known gaps.

Spate (``python -m spate.cli.main broker start``) is the default;
``SPATE_TEST_BROKER=tansu`` selects Tansu for the scenario suites, and the
client suite runs each test against both. Tansu is an independent
Kafka-compatible broker used to check that the tests themselves are right.
It is in-memory and takes no Kafka-style configuration, so tests that need
overrides it cannot honour, that restart the broker, or that trip over a
known Tansu defect skip there, saying why.
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import pytest

from tests.support.broker_process import BrokerProcess
from tests.support.tansu_process import TansuProcess, TansuUnavailableError, tansu_binary, unsupported_overrides

BROKER_ENV = "SPATE_TEST_BROKER"
SPATE, TANSU = BrokerProcess.kind, TansuProcess.kind

# Tansu's known gaps that tests of more than one suite run into.
TANSU_IDEMPOTENCE_BUG = (
    "InitProducerId v0-2 answers UNKNOWN_SERVER_ERROR, so an idempotent producer using them (Spate's, aiokafka's) "
    "cannot start"
)
TANSU_DELETE_RECORDS_UNIMPLEMENTED = "DeleteRecords is not implemented in its memory storage: the broker panics"
TANSU_LIST_OFFSETS_BY_TIME_BUG = (
    "ListOffsets by timestamp answers offset 0 whatever the timestamp, even on an empty partition"
)
TANSU_LIST_OFFSETS_LATEST_BUG = "ListOffsets LATEST answers the last batch's base offset + 1, not the log end offset"
TANSU_NO_CREATE_PARTITIONS = "CreatePartitions is not served (librdkafka reports the API missing)"
TANSU_NO_ALTER_CONFIGS = "AlterConfigs is not served, only IncrementalAlterConfigs (librdkafka reports the API missing)"
TANSU_TOPIC_CONFIGS_IGNORED = "topic configs are stored but neither validated nor applied"


def selected_broker() -> str:
    kind = os.environ.get(BROKER_ENV, SPATE).strip().lower()
    if kind not in (SPATE, TANSU):
        raise pytest.UsageError(f"{BROKER_ENV} must be '{SPATE}' or '{TANSU}', not {kind!r}")
    return kind


def new_broker(kind: str, data_dir: Path, overrides: dict[str, str] | None = None) -> BrokerProcess:
    """A broker of ``kind`` (not started yet); on Tansu, skips unless it behaves as ``overrides`` ask already."""
    overrides = dict(overrides or {})
    if kind == TANSU:
        missing = unsupported_overrides(overrides)
        if missing:
            pytest.skip(f"Tansu cannot be configured with {missing}")
        return TansuProcess(data_dir=data_dir, overrides=overrides)
    return BrokerProcess(data_dir=data_dir, overrides=overrides)


def skip_unless_installed(kind: str) -> None:
    """Skip where ``kind`` is Tansu and its binary is not installed (Spate always is)."""
    if kind == TANSU:
        try:
            tansu_binary()
        except TansuUnavailableError as exc:
            pytest.skip(str(exc))


def require_spate(broker_kind: str, reason: str) -> None:
    """Skip on Tansu; ``reason`` says why the test means nothing, or hits a Tansu defect, there."""
    if broker_kind == TANSU:
        pytest.skip(f"Tansu: {reason}")


@dataclass
class BrokerUnderTest:
    """A running broker and its kind, for tests that run against both."""

    kind: str
    process: BrokerProcess

    @property
    def bootstrap(self) -> str:
        return self.process.bootstrap

    @property
    def is_tansu(self) -> bool:
        return self.kind == TANSU

    def skip_on_tansu(self, reason: str) -> None:
        require_spate(self.kind, reason)

    def producer_settings(self, **overrides: Any) -> dict[str, Any]:
        """Spate producer options for this broker; the default idempotent producer cannot start on Tansu."""
        settings: dict[str, Any] = {"linger_ms": 2, "delivery_timeout_ms": 60_000}
        if self.is_tansu:
            settings["enable_idempotence"] = False
        settings.update(overrides)
        return settings


@dataclass
class BrokerFactory:
    """The brokers of one test, each with its own data directory and overrides; killed when the test ends.

    ``with BrokerFactory(kind, tmp_path) as start: broker = start({...})``; the
    test may stop, kill and restart them as it likes.
    """

    kind: str
    root: Path
    started: list[BrokerProcess] = field(default_factory=list)

    def __call__(self, overrides: dict[str, str] | None = None) -> BrokerProcess:
        process = new_broker(self.kind, self.root / f"broker-{len(self.started)}", overrides)
        self.started.append(process)
        return process.start()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        # Client handles that outlived the test would keep reconnecting to the killed brokers.
        gc.collect()
        for process in self.started:
            process.kill()


def brokers_in(value: object) -> list[BrokerProcess]:
    """The broker processes a fixture value holds: a broker, a broker under test, or a factory's brokers."""
    if isinstance(value, BrokerProcess):
        return [value]
    if isinstance(value, BrokerUnderTest):
        return [value.process]
    if isinstance(value, BrokerFactory):
        return list(value.started)
    cluster = getattr(value, "brokers", None)  # tests.support.cluster.ClusterForTests
    if isinstance(cluster, dict):
        return [broker for broker in cluster.values() if isinstance(broker, BrokerProcess)]
    return []
