"""A plan is applied only while it fits the log; otherwise it is refused with a reason (plan.py). Offsets
never change, so one plan fits every replica: each cleans with it as far as its own log allows."""

from __future__ import annotations

import pytest

from broker_core.storage.cleaner.plan import CleanPlan, LogBounds, StalePlanError, applied_end, check_plan
from broker_core.storage.files import TopicPartition

TP = TopicPartition("changelog", 0)
# Clean up to 100, active segment from 400, high watermark 450.
BOUNDS = LogBounds(log_start_offset=0, clean_up_to=100, active_base_offset=400, first_unstable_offset=None,
                   high_watermark=450)


def plan(start: int = 100, end: int = 300) -> CleanPlan:
    return CleanPlan.from_mapping(TP, start, end, {b"k": end - 1}, origin="spark")


def test_a_plan_of_the_dirty_range_fits_whatever_segment_it_ends_in():
    for end in (300, 250, 400):
        check_plan(plan(end=end), BOUNDS)
        assert applied_end(plan(end=end), BOUNDS, first_uncleanable_offset=400) == end


def test_a_plan_starting_before_the_first_dirty_offset_still_fits():
    # A replica cleaned further than the plan's start (its segments ended elsewhere): the plan covers its dirty
    # part and some of its clean part.
    assert applied_end(plan(start=0), BOUNDS, first_uncleanable_offset=400) == 300


def test_a_replica_cleans_with_a_plan_only_as_far_as_its_log_may_be_cleaned_now():
    # The plan ends inside this replica's active segment (from 250) or past its min.compaction.lag.ms.
    rolled_earlier = LogBounds(0, 100, 250, None, 450)
    assert applied_end(plan(end=300), rolled_earlier, first_uncleanable_offset=250) == 250
    assert applied_end(plan(end=300), BOUNDS, first_uncleanable_offset=200) == 200
    with pytest.raises(StalePlanError, match="may be cleaned only up to 100 now"):
        applied_end(plan(end=300), BOUNDS, first_uncleanable_offset=100)


@pytest.mark.parametrize(
    "candidate, reason",
    [
        (plan(start=200), "the log is clean up to 100 now; the plan starts at 200"),
        (plan(start=0, end=100), "the log is clean up to 100 now; the plan ends at 100, adding nothing"),
        (plan(end=500), "past the high watermark"),
    ],
)
def test_a_plan_that_does_not_fit_is_refused_with_its_reason(candidate: CleanPlan, reason: str):
    with pytest.raises(StalePlanError, match=reason):
        check_plan(candidate, BOUNDS)


def test_a_plan_past_an_open_transaction_or_the_high_watermark_is_refused():
    # A replica that has not caught up to the plan's end does not hold every record the plan names.
    open_txn = LogBounds(0, 100, 400, 250, 450)
    with pytest.raises(StalePlanError, match="stable up to 250"):
        check_plan(plan(end=300), open_txn)
    behind = LogBounds(0, 100, 400, None, 150)
    with pytest.raises(StalePlanError, match="past the high watermark"):
        check_plan(plan(end=200), behind)


def test_a_plan_whose_range_retention_deleted_is_refused():
    moved = LogBounds(200, 100, 400, None, 450)
    with pytest.raises(StalePlanError, match="log start offset to 200"):
        check_plan(plan(), moved)


def test_a_plan_naming_offsets_outside_its_range_is_refused_when_made():
    with pytest.raises(StalePlanError, match="outside"):
        CleanPlan.from_mapping(TP, 100, 200, {b"k": 250}, origin="spark")
