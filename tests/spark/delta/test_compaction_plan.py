"""Bin-packing of a table's files: small files of one partition, in write order, up to the target size."""

from __future__ import annotations

import pytest

from spark_ext.delta.compaction_plan import TableFile, plan_bins


def file(name: str, size: int, day: str | None = None, written: int = 0) -> TableFile:
    values = {} if day is None else {"day": day}
    return TableFile(f"{'' if day is None else f'day={day}/'}{name}", size, values, written)


def names(bins) -> list[list[str]]:
    return [[f.path.rpartition("/")[2] for f in b.files] for b in bins]


def test_small_files_are_packed_in_write_order_up_to_the_target():
    files = [file("c", 40, written=3), file("a", 40, written=1), file("b", 40, written=2), file("d", 40, written=4)]
    assert names(plan_bins(files, 100)) == [["a", "b"], ["c", "d"]]


def test_files_at_or_above_the_target_stay_as_they_are():
    assert names(plan_bins([file("big", 100), file("s1", 10, written=1), file("s2", 10, written=2)], 100)) == [
        ["s1", "s2"]]


def test_a_lone_small_file_is_not_rewritten():
    assert plan_bins([file("only", 10)], 100) == []
    assert plan_bins([file("x", 60, written=1), file("y", 60, written=2)], 100) == []


def test_files_of_different_partitions_never_share_a_bin():
    files = [file("a", 10, "2024-05-01"), file("b", 10, "2024-05-02"), file("c", 10, "2024-05-01", 1),
             file("d", 10, "2024-05-02", 1)]
    bins = plan_bins(files, 100)
    assert sorted(names(bins)) == [["a", "c"], ["b", "d"]]
    assert {b.partition_values["day"] for b in bins} == {"2024-05-01", "2024-05-02"}
    assert all(b.size == 20 for b in bins)


def test_the_target_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        plan_bins([], 0)
