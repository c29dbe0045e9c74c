"""Which broker implementation the suite runs against, and how to start one.

Spate (``python -m spate.cli.main broker start``) is the default;
``SPATE_TEST_BROKER=tansu`` selects Tansu, an independent Kafka-compatible
broker used to check that the tests themselves are right. Tansu is in-memory
and takes no Kafka-style configuration, so tests that need overrides it cannot
honour, that restart the broker, or that trip over a known Tansu defect skip
there, saying why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.broker_process import BrokerProcess
from tests.support.tansu_process import TansuProcess, unsupported_overrides

BROKER_ENV = "SPATE_TEST_BROKER"
SPATE, TANSU = "spate", "tansu"

# Known Tansu defects that some tests trip over.
TANSU_INIT_PRODUCER_ID_V0_BUG = "InitProducerId v0 (aiokafka's idempotent producer) fails with UNKNOWN_SERVER_ERROR"
TANSU_DELETE_RECORDS_UNIMPLEMENTED = "DeleteRecords is not implemented in its memory storage: the broker panics"
TANSU_LIST_OFFSETS_BY_TIME_BUG = (
    "ListOffsets by timestamp answers offset 0 whatever the timestamp, even on an empty partition"
)


def selected_broker() -> str:
    kind = os.environ.get(BROKER_ENV, SPATE).strip().lower()
    if kind not in (SPATE, TANSU):
        raise pytest.UsageError(f"{BROKER_ENV} must be '{SPATE}' or '{TANSU}', not {kind!r}")
    return kind


def new_broker(kind: str, data_dir: Path, overrides: dict[str, str]) -> BrokerProcess:
    if kind == TANSU:
        return TansuProcess(data_dir=data_dir, overrides=dict(overrides))
    return BrokerProcess(data_dir=data_dir, overrides=dict(overrides))


def require_spate(broker_kind: str, reason: str) -> None:
    """Skip on Tansu; ``reason`` says why the test means nothing, or hits a Tansu defect, there."""
    if broker_kind == TANSU:
        pytest.skip(f"Tansu: {reason}")


def stop_and_check(broker: BrokerProcess) -> None:
    """Stop a broker; fail if it had already died, since nothing stops a shared broker on purpose."""
    died = broker.process is not None and broker.process.poll() is not None
    code = broker.process.returncode if died and broker.process is not None else None
    broker.stop()
    if died:
        pytest.fail(f"the broker exited with {code} while the tests ran:\n{broker.log_tail()}")


@dataclass
class BrokerFactory:
    """Starts brokers with Kafka-named overrides; on Tansu, skips unless it behaves that way already."""

    kind: str
    root: Path
    started: list[BrokerProcess] = field(default_factory=list)

    def __call__(self, overrides: dict[str, str] | None = None) -> BrokerProcess:
        overrides = overrides or {}
        if self.kind == TANSU:
            missing = unsupported_overrides(overrides)
            if missing:
                pytest.skip(f"Tansu cannot be configured with {missing}")
        process = new_broker(self.kind, self.root / f"broker-{len(self.started)}", overrides)
        self.started.append(process)
        return process.start()
