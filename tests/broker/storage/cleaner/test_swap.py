"""A crash at any step of a swap leaves, after the next load, the old segments or the new one (swap.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.storage.cleaner import swap
from broker_core.storage.cleaner.swap import SWAP_RANGE_FILE, SWAP_STEPS
from broker_core.storage.unified_log import UnifiedLog
from tests.broker.storage.batch_factory import FakeClock
from tests.broker.storage.cleaner.cleaner_fixture import append, cleaner_for, contents, open_log


class Crash(BaseException):
    """Stands for the process dying: nothing after the step runs."""


def filled(log_dir: Path, clock: FakeClock) -> UnifiedLog:
    log = open_log(log_dir, clock, segment_bytes=1 << 20)
    for r in range(4):
        append(log, [(f"k{k}", f"v{r}") for k in range(5)] + [("gone", None if r == 3 else "x")])
        log.local_log.roll()
    return log


def expected_after(log_dir: Path, tmp_path: Path, clock: FakeClock) -> list:
    twin = tmp_path / "twin" / log_dir.name
    twin.parent.mkdir()
    log = filled(twin, clock)
    cleaner_for(log, clock).clean_once()
    return contents(log)


@pytest.mark.parametrize("step", SWAP_STEPS)
def test_a_crash_at_any_step_recovers_to_the_old_or_the_new_segments(
    step: str, log_dir: Path, tmp_path: Path, clock: FakeClock, monkeypatch
):
    after = expected_after(log_dir, tmp_path, clock)
    log = filled(log_dir, clock)
    before = contents(log)

    def crash_at(name: str) -> None:
        if name == step:
            raise Crash(name)

    monkeypatch.setattr(swap, "_step", crash_at)
    cleaner = cleaner_for(log, clock)
    with pytest.raises(Crash):
        cleaner.clean_once()
    monkeypatch.undo()
    reopened = open_log(log_dir, clock)
    recovered = contents(reopened)
    assert recovered in (before, after)
    committed = SWAP_STEPS.index(step) >= SWAP_STEPS.index("swap-committed")
    assert recovered == (after if committed else before)
    assert not (log_dir / SWAP_RANGE_FILE).exists()
    assert sorted(p.name for p in log_dir.iterdir() if ".cleaned" in p.name or ".swap" in p.name) == []


def test_a_swap_file_without_its_range_file_is_still_completed(log_dir: Path, clock: FakeClock):
    log = filled(log_dir, clock)
    cleaner_for(log, clock).clean_once()
    after = contents(log)
    log.close()
    # The loader's own rule: a .swap segment replaces the live segments within its offsets.
    (log_dir / "00000000000000000000.log").rename(log_dir / "00000000000000000000.log.swap")
    assert contents(open_log(log_dir, clock)) == after
