"""The spate source tests use the shared SparkSession and broker of ``tests/conftest.py``."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

import pytest

from tests.support.broker_process import BrokerProcess


@pytest.fixture(scope="session")
def broker(spark_broker: BrokerProcess) -> BrokerProcess:
    return spark_broker


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """Names (topics, groups, checkpoints) unique to the test and readable in logs."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name)[:50].strip("-")

    def make(kind: str) -> str:
        return f"{stem}-{kind}-{uuid.uuid4().hex[:6]}"

    return make
