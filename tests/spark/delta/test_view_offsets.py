"""A table view's offsets: app ids per partition, and the slices a run commits one by one."""

from __future__ import annotations

import json

import pytest

from spark_ext.delta.view_offsets import OffsetRange, app_id, describe, plan_slices, spark_offsets_json


def test_each_partition_has_an_app_id_of_its_own():
    assert app_id("customers", 0) == "spate-table-view:customers:0"
    assert app_id("customers", 0) != app_id("customers", 1) != app_id("orders", 1)


def test_without_a_cap_one_slice_covers_every_partition_with_new_offsets():
    assert plan_slices({0: 5, 1: 0, 2: 7}, {0: 10, 1: 3, 2: 7}) == [
        (OffsetRange(0, 5, 10), OffsetRange(1, 0, 3)),
    ]


def test_a_cap_splits_the_ranges_into_consecutive_slices():
    slices = plan_slices({0: 0, 1: 10}, {0: 5, 1: 12}, max_offsets_per_commit=2)
    assert slices == [
        (OffsetRange(0, 0, 2), OffsetRange(1, 10, 12)),
        (OffsetRange(0, 2, 4),),
        (OffsetRange(0, 4, 5),),
    ]


def test_nothing_new_plans_no_slice():
    assert plan_slices({0: 4}, {0: 4}) == []
    assert plan_slices({}, {}) == []


def test_a_cap_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        plan_slices({0: 0}, {0: 1}, max_offsets_per_commit=0)


def test_a_range_never_runs_backwards():
    with pytest.raises(ValueError, match="bad offset range"):
        OffsetRange(0, 5, 4)


def test_offsets_are_written_as_the_spate_source_and_the_commit_metadata_read_them():
    assert json.loads(spark_offsets_json("t", {1: 7, 0: 3})) == {"t": {"0": 3, "1": 7}}
    assert json.loads(describe([OffsetRange(0, 3, 9), OffsetRange(2, 0, 1)])) == {"0": [3, 9], "2": [0, 1]}
