"""SIGKILL during a compaction swap: after a restart the log equals what it was before the swap or what
the swap made of it, never a mix.

The broker kills itself at a swap step chosen at random per round (``SPATE_TEST_SWAP_KILL_AT``: a real
SIGKILL, landed inside the swap). The suite runs a few rounds; the fault run takes more:
``SPATE_SWAP_KILL_ROUNDS=20 pytest tests/scenarios/compaction/test_swap_kill.py``. Each failure prints the
seed and the step.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

from broker_core.storage.cleaner.swap import KILL_AT_ENV, SWAP_STEPS
from tests.scenarios.compaction.changelog import Changelog, Entry, create_compacted_topic, read_all, write_changelog
from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]

ROUNDS = int(os.environ.get("SPATE_SWAP_KILL_ROUNDS", "3"))
TOPIC = "swapped"


def segment_bases(directory: Path) -> list[int]:
    return sorted(int(p.name.split(".")[0]) for p in directory.glob("*.log"))


def acceptable(recovered: list[Entry], log: Changelog, bases: list[int]) -> bool:
    """The full log, or a log whose prefix below some segment boundary is cleaned and the rest untouched."""
    if recovered == log.entries:
        return True
    for dirty_end in bases:
        cleaned = log.compacted(dirty_end)
        for boundary in bases:
            mixed = [e for e in cleaned if e[0] < boundary] + [e for e in log.entries if e[0] >= boundary]
            if recovered == mixed:
                return True
    return False


def run_round(data_dir: Path, step: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KILL_AT_ENV, step)
    broker = BrokerProcess(data_dir, overrides={"log.cleaner.backoff.ms": "1500"}).start()
    try:
        create_compacted_topic(broker.bootstrap, TOPIC, **{"segment.bytes": "65536"})
        log = write_changelog(broker.bootstrap, TOPIC, records=6_000, keys=50, seed=len(step))
        deadline = time.monotonic() + 60
        while broker.exit_code is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert broker.exit_code == -9, f"the broker did not die at {step}: {broker.exit_code}\n{broker.log_tail()}"
    finally:
        broker.kill()
    monkeypatch.delenv(KILL_AT_ENV)
    broker.overrides["log.cleaner.enable"] = "false"
    broker.start()
    try:
        recovered = read_all(broker.bootstrap, TOPIC)
        bases = segment_bases(broker.log_dir / f"{TOPIC}-0")
        assert acceptable(recovered, log, bases), f"a mix of old and new segments after a kill at {step}"
        committed = SWAP_STEPS.index(step) >= SWAP_STEPS.index("swap-committed")
        assert (recovered != log.entries) == committed, f"kill at {step}: committed={committed}"
        assert not [p for p in (broker.log_dir / f"{TOPIC}-0").iterdir() if p.suffix in (".cleaned", ".swap")]
    finally:
        broker.stop()


def test_a_kill_inside_a_swap_recovers_the_old_or_the_new_segments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed = int(os.environ.get("SPATE_SWAP_KILL_SEED", str(random.randrange(1 << 30))))
    rng = random.Random(seed)
    steps = [rng.choice(SWAP_STEPS) for _ in range(ROUNDS)]
    print(f"swap kill seed {seed}: steps {steps}")
    for i, step in enumerate(steps):
        try:
            run_round(tmp_path / f"round-{i}", step, monkeypatch)
        except AssertionError as exc:
            raise AssertionError(f"round {i} (seed {seed}, step {step}): {exc}") from exc
