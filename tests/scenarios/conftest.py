"""Brokers of the black-box suites (``broker_under_test`` says how Spate or Tansu is chosen).

Each test module gets its own broker, so a module that breaks the broker (the
malformed-input tests, for instance) cannot fail the others; a broker that
died before its module finished fails that module's teardown. A test that
needs a broker of its own, with overrides or to restart it, takes
``broker_factory``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.broker_process import BrokerProcess, running_broker
from tests.support.broker_under_test import BROKER_ENV, BrokerFactory, new_broker, selected_broker


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
    with running_broker(new_broker(broker_kind, tmp_path_factory.mktemp("broker"))) as running:
        yield running


@pytest.fixture
def broker_factory(broker_kind: str, tmp_path: Path) -> Iterator[BrokerFactory]:
    """Brokers of one test, each with its own data directory and overrides; killed afterwards."""
    with BrokerFactory(broker_kind, tmp_path) as factory:
        yield factory
