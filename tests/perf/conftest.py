from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest


@pytest.fixture
def disk_tmp() -> Iterator[Path]:
    """A scratch directory on the repository's disk (not tmpfs), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix=".perf-", dir=Path(__file__).resolve().parent))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
