"""Archive-spanning reads and the archive job: the options, where ranges are cut, what each run copies."""

from __future__ import annotations

import pytest

from jobs.archive import ArchiveJobError, plan_ranges
from spark_ext.archive_options import ArchiveReadOptions
from spark_ext.archive_reader import split_at
from spark_ext.offset_ranges import OffsetRange
from spark_ext.options import SourceOptionError, parse_source_options
from spate.client import TopicPartition
from spate.client.admin.archive_offsets import PartitionArchiveState

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "orders"}


def options(**extra: str):
    return parse_source_options({**BASE, **extra}, streaming=False)


def test_archive_is_off_unless_asked_for():
    assert options().archive is None
    assert options(archive="false").archive is None


def test_archive_true_reads_each_topics_configured_archive_or_the_given_path():
    assert options(archive="true").archive == ArchiveReadOptions(None)
    assert options(archive="TRUE", archivePath="s3://lake/orders").archive == ArchiveReadOptions("s3://lake/orders")


@pytest.mark.parametrize("extra, option, message", [
    ({"archive": "yes"}, "archive", "true or false"),
    ({"archivePath": "/data/orders"}, "archivePath", "only with option archive=true"),
    ({"archive": "true", "archivePath": " "}, "archivePath", "Delta table"),
])
def test_bad_archive_options_name_the_option(extra, option, message):
    with pytest.raises(SourceOptionError) as error:
        options(**extra)
    assert option in str(error.value) and message in str(error.value)


def test_a_range_is_cut_where_the_partitions_archive_ends():
    piece = OffsetRange("orders", 0, 10, 50)
    assert split_at(piece, 30) == (OffsetRange("orders", 0, 10, 30), OffsetRange("orders", 0, 30, 50))
    assert split_at(piece, 50) == (piece, None)
    assert split_at(piece, 80) == (piece, None)
    assert split_at(piece, 10) == (None, piece)
    assert split_at(piece, None) == (None, piece)


def state(partition: int, log_start: int, target: int, stable: int) -> PartitionArchiveState:
    return PartitionArchiveState(TopicPartition("orders", partition), 0, log_start, stable, stable, None, target, "/t")


def test_each_run_copies_from_where_the_archive_ends_up_to_the_retention_target():
    states = {s.tp: s for s in (state(0, 0, 100, 150), state(1, 0, 40, 90), state(2, 0, 0, 10))}
    plans = plan_ranges(states, {0: 60, 1: 40}, up_to_stable=False)
    assert [(p.partition, p.start, p.until) for p in plans] == [(0, 60, 100)]


def test_all_copies_up_to_the_last_stable_offset():
    states = {s.tp: s for s in (state(0, 0, 100, 150),)}
    assert [(p.start, p.until) for p in plan_ranges(states, {}, up_to_stable=True)] == [(0, 150)]


def test_a_partition_never_archived_starts_at_its_log_start():
    states = {s.tp: s for s in (state(0, 70, 100, 150),)}
    assert [(p.start, p.until) for p in plan_ranges(states, {}, up_to_stable=False)] == [(70, 100)]
    assert [(p.start, p.until) for p in plan_ranges(states, {0: 20}, up_to_stable=False)] == [(70, 100)]


def test_archive_lag_counts_what_retention_holds_back():
    assert state(0, 0, 100, 150).archive_lag == 100
    archived = PartitionArchiveState(TopicPartition("orders", 0), 0, 30, 150, 150, 80, 100, "/t")
    assert archived.archive_lag == 20


def test_an_archive_reaching_past_the_log_belongs_to_an_earlier_topic_and_stops_the_run():
    states = {s.tp: s for s in (state(0, 0, 10, 20),)}
    with pytest.raises(ArchiveJobError, match="earlier topic"):
        plan_ranges(states, {0: 500}, up_to_stable=False)
