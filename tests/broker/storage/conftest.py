from __future__ import annotations

from pathlib import Path

import pytest

from tests.broker.storage.batch_factory import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    """A partition directory path (not yet created)."""
    return tmp_path / "orders-0"
