from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.broker_process import BrokerProcess, running_broker
from tests.support.broker_under_test import require_spate


@pytest.fixture(scope="module")
def broker(broker_kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    require_spate(broker_kind, "the test sets Spate's client quotas")
    with running_broker(BrokerProcess(tmp_path_factory.mktemp("quotas"))) as process:
        yield process
