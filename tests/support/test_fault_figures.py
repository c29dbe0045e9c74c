"""The fault suite's measures on synthetic data: its size from the environment, producer pauses, printed figures."""

from __future__ import annotations

import pytest

from tests.support.faults.figures import FaultFigures
from tests.support.faults.history import HistoryReport
from tests.support.faults.scale import COPY_RECORDS_ENV, ROUNDS_ENV, FaultScale
from tests.support.faults.workload import longest_pause


def test_the_quick_run_is_the_default_and_twenty_rounds_make_the_full_one(monkeypatch) -> None:
    monkeypatch.delenv(ROUNDS_ENV, raising=False)
    monkeypatch.delenv(COPY_RECORDS_ENV, raising=False)
    quick = FaultScale.from_environment()
    assert (quick.rounds, quick.episodes, quick.copy_records, quick.full) == (3, 1, 10_000, False)
    monkeypatch.setenv(ROUNDS_ENV, "20")
    full = FaultScale.from_environment()
    assert (full.rounds, full.episodes, full.copy_records, full.full) == (20, 5, 100_000, True)
    monkeypatch.setenv(COPY_RECORDS_ENV, "500")
    assert FaultScale.from_environment().copy_records == 500


def test_a_run_without_rounds_is_refused(monkeypatch) -> None:
    monkeypatch.setenv(ROUNDS_ENV, "0")
    with pytest.raises(ValueError, match=ROUNDS_ENV):
        FaultScale.from_environment()


def test_a_pause_runs_from_the_last_acknowledgement_before_the_fault_to_the_next_one() -> None:
    times = [[1.0, 2.0, 9.0, 9.5], [1.5, 3.0, 3.5, 10.0]]
    assert longest_pause(times, start=2.5, end=4.0, now=20.0) == 7.0  # partition 0: 2.0 → 9.0
    assert longest_pause(times, start=9.6, end=9.8, now=20.0) == 10.5  # partition 0 silent since 9.5


def test_a_pause_before_any_acknowledgement_counts_from_the_start() -> None:
    assert longest_pause([[5.0, 5.1]], start=4.0, end=4.5, now=6.0) == 1.0
    assert longest_pause([[]], start=4.0, end=4.5, now=6.0) == 2.0


def test_figures_print_as_one_line_with_the_history_counts_and_the_slowest_times() -> None:
    figures = FaultFigures("crash loop", faults=2, to_new_leader_s=[6.0, 4.0], extra={"seed": 7})
    figures.add_history(HistoryReport(acknowledged=10, failed=1, unresolved=0, read=11, lost=(),
                                      duplicates=("0:1",), out_of_order=(), moved=(), unexpected=()))
    assert figures.line() == ("[crash loop] faults=2 acked=10 lost=0 duplicated=1 out_of_order=0 failed=1 "
                              "unresolved=0 new_leader_s=max 6.00/mean 5.00 seed=7")
