from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.scenarios.security.secure_broker import SecureBroker, secure_broker
from tests.support.broker_process import running_broker
from tests.support.broker_under_test import require_spate


@pytest.fixture(scope="module")
def secure(broker_kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureBroker]:
    require_spate(broker_kind, "the test configures Spate's security listeners")
    broker = secure_broker(tmp_path_factory.mktemp("secure"))
    with running_broker(broker.process):
        yield broker
