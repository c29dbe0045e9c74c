"""A plan is applied only while it fits the log; otherwise it is refused with a reason (plan.py)."""

from __future__ import annotations

import pytest

from broker_core.storage.cleaner.plan import CleanPlan, LogBounds, StalePlanError, check_plan
from broker_core.storage.files import TopicPartition

TP = TopicPartition("changelog", 0)
BOUNDS = LogBounds(
    log_start_offset=0, clean_up_to=100, active_base_offset=400, first_unstable_offset=None, high_watermark=450,
    segment_bases=(0, 100, 200, 300, 400),
)


def plan(start: int = 100, end: int = 300) -> CleanPlan:
    return CleanPlan.from_mapping(TP, start, end, {b"k": end - 1}, origin="spark")


def test_a_plan_of_the_dirty_range_up_to_a_segment_boundary_fits():
    check_plan(plan(), BOUNDS)
    check_plan(plan(end=400), BOUNDS)


@pytest.mark.parametrize(
    "candidate, reason",
    [
        (plan(start=0), "the log is clean up to 100"),
        (plan(end=500), "into the active segment"),
        (plan(end=250), "not a segment boundary"),
    ],
)
def test_a_plan_that_does_not_fit_is_refused_with_its_reason(candidate: CleanPlan, reason: str):
    with pytest.raises(StalePlanError, match=reason):
        check_plan(candidate, BOUNDS)


def test_a_plan_past_an_open_transaction_or_the_high_watermark_is_refused():
    open_txn = LogBounds(0, 100, 400, 250, 450, BOUNDS.segment_bases)
    with pytest.raises(StalePlanError, match="stable up to 250"):
        check_plan(plan(end=300), open_txn)
    behind = LogBounds(0, 100, 400, None, 150, BOUNDS.segment_bases)
    with pytest.raises(StalePlanError, match="past the high watermark"):
        check_plan(plan(end=200), behind)


def test_a_plan_whose_range_retention_deleted_is_refused():
    moved = LogBounds(200, 100, 400, None, 450, BOUNDS.segment_bases[2:])
    with pytest.raises(StalePlanError, match="log start offset to 200"):
        check_plan(plan(), moved)


def test_a_plan_naming_offsets_outside_its_range_is_refused_when_made():
    with pytest.raises(StalePlanError, match="outside"):
        CleanPlan.from_mapping(TP, 100, 200, {b"k": 250}, origin="spark")
