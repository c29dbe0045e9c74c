"""Planning offset ranges: read limits per trigger, minPartitions splitting and minRecordsPerPartition packing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from spark_ext.offset_ranges import (
    OffsetRange,
    SizeSample,
    apportion,
    cap_bytes,
    cap_offsets,
    coalesce_ranges,
    end_within_budget,
    estimate_bytes,
    ranges_between,
    split_ranges,
)
from spate.client import TopicPartition

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)

partition_offsets = st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 500)), min_size=1, max_size=6)


def starts_and_latest(pairs):
    tps = [TopicPartition("t", i) for i in range(len(pairs))]
    return {tp: s for tp, (s, _) in zip(tps, pairs)}, {tp: s + n for tp, (s, n) in zip(tps, pairs)}


def test_ranges_between_skips_partitions_without_new_offsets():
    assert ranges_between({A0: 5, A1: 3}, {A0: 9, A1: 3}) == [OffsetRange("a", 0, 5, 9)]


def test_cap_offsets_shares_the_limit_in_proportion_to_what_each_partition_has():
    ends = cap_offsets({A0: 0, A1: 100, B0: 0}, {A0: 300, A1: 200, B0: 0}, 40)
    assert ends == {A0: 30, A1: 110, B0: 0}


def test_cap_offsets_returns_everything_when_under_the_limit():
    assert cap_offsets({A0: 3}, {A0: 7}, 10) == {A0: 7}


@settings(max_examples=200)
@given(partition_offsets, st.integers(1, 2000))
def test_cap_offsets_plans_exactly_the_limit_or_everything_and_stays_within_each_partition(pairs, limit):
    starts, latest = starts_and_latest(pairs)
    ends = cap_offsets(starts, latest, limit)
    planned = sum(ends[tp] - starts[tp] for tp in starts)
    assert planned == min(limit, sum(latest[tp] - starts[tp] for tp in starts))
    assert all(starts[tp] <= ends[tp] <= latest[tp] for tp in starts)


@settings(max_examples=200)
@given(st.integers(0, 1000), st.lists(st.integers(0, 100), min_size=1, max_size=8))
def test_apportion_never_exceeds_caps_and_hands_out_what_fits(total, weights):
    shares = apportion(total, weights, weights)
    assert all(0 <= s <= w for s, w in zip(shares, weights))
    assert sum(shares) == min(total, sum(weights))


def sample(start, sizes, gap_at=None):
    """Records of the given sizes from ``start`` on, one per offset (with a one-offset gap at ``gap_at``)."""
    offsets, offset = [], start
    for index in range(len(sizes)):
        if index == gap_at:
            offset += 1
        offsets.append(offset)
        offset += 1
    return SizeSample(start, offset, offsets, list(sizes))


def test_estimate_is_exact_inside_the_sample_and_extrapolated_beyond_it():
    s = sample(10, [100, 200, 300])
    assert estimate_bytes(s, 12, 0) == 300
    assert estimate_bytes(s, 13, 0) == 600
    assert estimate_bytes(s, 16, 0) == 600 + 3 * 200


def test_end_within_budget_stops_before_the_record_that_would_overflow():
    s = sample(0, [100, 100, 500, 100])
    assert end_within_budget(s, 250, 100, 0) == 2
    assert end_within_budget(s, 700, 100, 0) == 3
    # Past the sample, the average of 200 bytes per offset applies.
    assert end_within_budget(s, 1200, 100, 0) == 6


def test_gaps_inside_the_sample_cost_nothing():
    s = sample(0, [100, 100, 100], gap_at=1)  # offsets 0, 2, 3; offset 1 is a marker
    assert end_within_budget(s, 100, 10, 0) == 2
    assert end_within_budget(s, 300, 10, 0) == 4


@settings(max_examples=100)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=5), st.integers(1, 400), st.integers(1, 40))
def test_cap_bytes_keeps_evenly_sized_records_within_the_budget(counts, limit, size):
    starts = {TopicPartition("t", i): 0 for i in range(len(counts))}
    latest = {TopicPartition("t", i): n for i, n in enumerate(counts)}
    samples = {tp: sample(0, [size] * latest[tp]) for tp in starts}
    ends = cap_bytes(starts, latest, samples, limit)
    planned = sum(ends.values())
    assert all(0 <= ends[tp] <= latest[tp] for tp in starts)
    if size <= limit:
        assert planned * size <= limit
        assert planned == min(sum(counts), limit // size)
    else:
        assert planned == 1  # a record bigger than the budget still moves the stream on


def test_cap_bytes_estimates_unsampled_partitions_from_the_sampled_ones():
    samples = {A0: sample(0, [10] * 5)}
    ends = cap_bytes({A0: 0, A1: 0}, {A0: 100, A1: 100}, samples, 400)
    assert ends == {A0: 20, A1: 20}


def test_split_ranges_gives_at_least_min_partitions_covering_each_range_exactly():
    ranges = [OffsetRange("a", 0, 0, 90), OffsetRange("a", 1, 100, 110)]
    pieces = split_ranges(ranges, min_partitions=5)
    assert len(pieces) == 5
    assert [p for p in pieces if p.partition == 1] == [OffsetRange("a", 1, 100, 110)]
    assert [(p.from_offset, p.until_offset) for p in pieces if p.partition == 0] == [
        (0, 23), (23, 46), (46, 68), (68, 90)
    ]


def test_split_ranges_leaves_ranges_alone_when_there_are_enough():
    ranges = [OffsetRange("a", 0, 0, 90), OffsetRange("a", 1, 0, 5)]
    assert split_ranges(ranges, min_partitions=2) == ranges


def test_max_records_per_partition_cuts_long_ranges():
    pieces = split_ranges([OffsetRange("a", 0, 0, 10)], max_records_per_partition=4)
    assert [(p.from_offset, p.until_offset) for p in pieces] == [(0, 4), (4, 7), (7, 10)]


@settings(max_examples=200)
@given(partition_offsets, st.integers(1, 40), st.one_of(st.none(), st.integers(1, 100)))
def test_split_pieces_are_non_empty_consecutive_and_cover_the_ranges(pairs, min_partitions, max_records):
    starts, latest = starts_and_latest(pairs)
    ranges = ranges_between(starts, latest)
    pieces = split_ranges(ranges, min_partitions=min_partitions, max_records_per_partition=max_records)
    for r in ranges:
        mine = sorted(p for p in pieces if p.partition == r.partition)
        assert mine[0].from_offset == r.from_offset and mine[-1].until_offset == r.until_offset
        assert all(a.until_offset == b.from_offset for a, b in zip(mine, mine[1:]))
        assert all(p.size > 0 for p in mine)
        if max_records is not None:
            assert all(p.size <= max_records for p in mine)
    total = sum(r.size for r in ranges)
    assert len(pieces) >= min(min_partitions, total)


def test_short_ranges_share_a_task_until_it_spans_min_records():
    ranges = [OffsetRange("a", p, 0, 40) for p in range(5)]
    groups = coalesce_ranges(ranges, min_records=100)
    assert groups == [ranges[:3], ranges[3:]]


def test_a_range_of_min_records_or_more_keeps_a_task_of_its_own():
    big, small = OffsetRange("a", 0, 0, 100), OffsetRange("a", 1, 0, 10)
    assert coalesce_ranges([small, big, small], min_records=100) == [[big], [small, small]]


def test_packing_never_goes_past_max_records_per_partition():
    # The pieces maxRecordsPerPartition cut stay apart.
    pieces = split_ranges([OffsetRange("a", 0, 0, 30)], max_records_per_partition=10)
    assert coalesce_ranges(pieces, min_records=100, max_records=10) == [[p] for p in pieces]
    assert coalesce_ranges(pieces, min_records=100, max_records=20) == [pieces[:2], pieces[2:]]


def test_min_records_of_one_plans_a_task_per_range():
    ranges = [OffsetRange("a", p, 0, 1) for p in range(3)]
    assert coalesce_ranges(ranges, min_records=1) == [[r] for r in ranges]


@settings(max_examples=200)
@given(partition_offsets, st.integers(1, 300), st.one_of(st.none(), st.integers(1, 300)))
def test_every_piece_lands_in_exactly_one_group_in_order(pairs, min_records, max_records):
    starts, latest = starts_and_latest(pairs)
    pieces = ranges_between(starts, latest)
    groups = coalesce_ranges(pieces, min_records=min_records, max_records=max_records)
    assert sorted(p for g in groups for p in g) == sorted(pieces)
    for group in groups:
        if len(group) > 1:
            assert all(p.size < min_records for p in group)
            assert sum(p.size for p in group[:-1]) < min_records
            if max_records is not None:
                assert sum(p.size for p in group) <= max_records
