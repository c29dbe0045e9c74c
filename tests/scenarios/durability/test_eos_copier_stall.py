"""The copier ends itself, to be restarted, when a transactional call never returns (a client defect)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.faults.copier import STALLED_EXIT

REPO = Path(__file__).resolve().parents[3]

STUCK_CALL = """
import time
from tests.scenarios.durability import eos_copier
eos_copier.CLIENT_TIMEOUT_S, eos_copier.STALL_GRACE_S = 0.2, 0.3
eos_copier.Copier._retrying(None, "send_offsets_to_transaction", lambda timeout: time.sleep(30))
"""

RETURNING_CALL = """
from tests.scenarios.durability import eos_copier
eos_copier.CLIENT_TIMEOUT_S, eos_copier.STALL_GRACE_S = 0.2, 0.3
eos_copier.Copier._retrying(None, "commit_transaction", lambda timeout: None)
import time; time.sleep(1)  # the cancelled guard never fires
"""


def run(program: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", program], cwd=REPO, capture_output=True, text=True, timeout=30)


def test_a_call_stuck_past_its_timeout_ends_the_copier_with_the_stalled_status() -> None:
    result = run(STUCK_CALL)
    assert result.returncode == STALLED_EXIT
    assert "stalled: send_offsets_to_transaction has not returned" in result.stderr


def test_a_call_that_returns_disarms_the_guard() -> None:
    result = run(RETURNING_CALL)
    assert result.returncode == 0, result.stderr
