"""Broker fixtures for the black-box suite (see ``broker_under_test`` for Spate vs Tansu).

Each test module gets its own broker, so a module that breaks the broker (the
malformed-input tests, for instance) cannot fail the others; a broker that
died before its module finished fails that module's teardown.
"""

from __future__ import annotations

import gc
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.broker_process import BrokerProcess
from tests.support.broker_under_test import (
    BROKER_ENV,
    BrokerFactory,
    new_broker,
    selected_broker,
    stop_and_check,
)


def pytest_configure(config: pytest.Config) -> None:
    # pytest-timeout registers this marker itself; without the plugin the marks are inert
    # and --strict-markers must still accept them.
    config.addinivalue_line("markers", "timeout(seconds): fail a test that runs longer (pytest-timeout)")


def pytest_report_header(config: pytest.Config) -> str:
    return f"integration broker under test: {selected_broker()} (set {BROKER_ENV}=spate|tansu)"


@pytest.fixture(scope="session")
def broker_kind() -> str:
    return selected_broker()


@pytest.fixture(scope="module")
def broker(broker_kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """A broker with its default configuration, shared by the tests of one module."""
    process = new_broker(broker_kind, tmp_path_factory.mktemp("broker"), {}).start()
    yield process
    # Client handles that outlived their tests would keep reconnecting to the stopped broker.
    gc.collect()
    stop_and_check(process)


@pytest.fixture
def broker_factory(broker_kind: str, tmp_path: Path) -> Iterator[BrokerFactory]:
    """Brokers of one test, each with its own data directory and overrides; killed afterwards."""
    factory = BrokerFactory(broker_kind, tmp_path)
    yield factory
    gc.collect()
    for process in factory.started:
        process.kill()


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> Callable[..., str]:
    """Unique, legal topic names derived from the test's name."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name)[:80].strip("-")

    def make(suffix: str = "") -> str:
        return f"{stem}{'-' + suffix if suffix else ''}-{uuid.uuid4().hex[:8]}"

    return make


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """Attach the tail of each broker's log to a failed test's report."""
    report = yield
    if report.failed:
        funcargs = getattr(item, "funcargs", {})
        processes: list[BrokerProcess] = []
        if isinstance(funcargs.get("broker"), BrokerProcess):
            processes.append(funcargs["broker"])
        if isinstance(funcargs.get("broker_factory"), BrokerFactory):
            processes.extend(funcargs["broker_factory"].started)
        for process in processes:
            report.sections.append((f"broker log {process.log_path}", process.log_tail(60)))
    return report
