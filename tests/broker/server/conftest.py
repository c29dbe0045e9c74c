from __future__ import annotations

import pytest

from broker_core.server.embedded import EmbeddedBroker
from tests.support.raw_client import RawClient


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with EmbeddedBroker(tmp_path_factory.mktemp("server")) as running:
        yield running


@pytest.fixture
def raw(broker):
    client = RawClient(broker.bootstrap_servers, timeout=10)
    yield client
    client.close()
