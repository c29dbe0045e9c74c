"""The streaming reader's driver side (offsets, limits, data loss, group commits) against a fake cluster."""

from __future__ import annotations

import logging
import pickle

import pytest
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadMaxBytes,
    ReadMaxRows,
    ReadMinRows,
)

from spark_ext.data_loss import DataLossError
from spark_ext.offset_ranges import SizeSample
from spark_ext.offset_spec import Earliest, Latest
from spark_ext.options import parse_source_options
from spark_ext.reader import OffsetRangePartition, OffsetRangesPartition
from spark_ext.stream_reader import SpateStreamReader
from spate.client import TopicPartition

P0, P1, P2 = (TopicPartition("t", p) for p in range(3))


class FakeAdmin:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.commits: list[tuple[str, dict]] = []

    def alter_group_offsets(self, group_id, offsets, timeout_ms=None):
        if self.fail:
            raise RuntimeError("coordinator unavailable")
        self.commits.append((group_id, {tp: meta.offset for tp, meta in offsets.items()}))


class FakeCluster:
    """Partitions as (log start, log end), record size fixed; stands in for OffsetReader."""

    def __init__(self, log: dict[TopicPartition, tuple[int, int]], record_size: int = 10) -> None:
        self.log = dict(log)
        self.record_size = record_size
        self.admin = FakeAdmin()
        self.closed = False

    def partitions(self):
        return set(self.log)

    def earliest(self, tps):
        return {tp: self.log[tp][0] for tp in tps if tp in self.log}

    def latest(self, tps):
        return {tp: self.log[tp][1] for tp in tps if tp in self.log}

    def resolve(self, spec, tps, ending=False):
        if isinstance(spec, Earliest):
            return self.earliest(tps)
        if isinstance(spec, Latest):
            return self.latest(tps)
        raise NotImplementedError(spec)

    def sample_sizes(self, starts, latest, max_bytes):
        return {
            tp: SizeSample(starts[tp], latest[tp], list(range(starts[tp], latest[tp])),
                           [self.record_size] * (latest[tp] - starts[tp]))
            for tp in latest if latest[tp] > starts[tp]
        }

    def close(self):
        self.closed = True


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class ClusterFactory:
    """Hands the reader its fake cluster; a class (not a lambda) so the reader stays picklable."""

    def __init__(self, cluster: FakeCluster) -> None:
        self.cluster = cluster

    def __call__(self, options) -> FakeCluster:
        return self.cluster


def make_reader(cluster: FakeCluster, clock: Clock | None = None, **options: str) -> SpateStreamReader:
    parsed = parse_source_options({"bootstrap.servers": "h:1", "subscribe": "t", **options}, streaming=True)
    return SpateStreamReader(parsed, offset_reader_factory=ClusterFactory(cluster), clock=clock or Clock())


def ranges(partitions):
    return sorted((p.offset_range.partition, p.offset_range.from_offset, p.offset_range.until_offset)
                  for p in unpacked(partitions))


def unpacked(partitions):
    """Every planned range, whether it has a task of its own or shares one."""
    return [part for p in partitions for part in (p.parts if isinstance(p, OffsetRangesPartition) else [p])]


def test_initial_offsets_follow_starting_offsets():
    cluster = FakeCluster({P0: (5, 20), P1: (0, 7)})
    assert make_reader(cluster, startingOffsets="earliest").initialOffset() == {"t": {"0": 5, "1": 0}}
    assert make_reader(cluster).initialOffset() == {"t": {"0": 20, "1": 7}}


def test_the_default_read_limit_reflects_the_options():
    cluster = FakeCluster({P0: (0, 1)})
    assert make_reader(cluster).getDefaultReadLimit() == ReadAllAvailable()
    assert make_reader(cluster, maxOffsetsPerTrigger="9").getDefaultReadLimit() == ReadMaxRows(9)
    assert make_reader(cluster, maxBytesPerTrigger="1k").getDefaultReadLimit() == ReadMaxBytes(1024)
    assert make_reader(cluster, minOffsetsPerTrigger="4").getDefaultReadLimit() == ReadMinRows(4)


def test_read_all_available_ignores_the_configured_limits():
    reader = make_reader(FakeCluster({P0: (0, 100)}), maxOffsetsPerTrigger="10")
    assert reader.latestOffset({"t": {"0": 0}}, ReadAllAvailable()) == {"t": {"0": 100}}


def test_offset_and_byte_limits_apply_together():
    cluster = FakeCluster({P0: (0, 100), P1: (0, 100)}, record_size=10)
    reader = make_reader(cluster, maxOffsetsPerTrigger="50", maxBytesPerTrigger="300")
    assert reader.latestOffset({"t": {"0": 0, "1": 0}}, ReadMaxRows(50)) == {"t": {"0": 15, "1": 15}}
    reader = make_reader(cluster, maxOffsetsPerTrigger="20", maxBytesPerTrigger="300")
    assert reader.latestOffset({"t": {"0": 0, "1": 0}}, ReadMaxRows(20)) == {"t": {"0": 10, "1": 10}}


def test_a_new_partition_is_read_from_its_log_start():
    cluster = FakeCluster({P0: (0, 10), P1: (0, 4)})
    reader = make_reader(cluster)
    end = reader.latestOffset({"t": {"0": 10}}, ReadAllAvailable())
    assert end == {"t": {"0": 10, "1": 4}}
    assert ranges(reader.partitions({"t": {"0": 10}}, end)) == [(1, 0, 4)]


def test_min_offsets_per_trigger_waits_for_data_until_the_max_trigger_delay():
    cluster = FakeCluster({P0: (0, 3)})
    clock = Clock()
    reader = make_reader(cluster, clock, minOffsetsPerTrigger="5", maxTriggerDelay="10s")
    start = {"t": {"0": 0}}
    assert reader.latestOffset(start, ReadMinRows(5)) == start
    clock.now += 9
    assert reader.latestOffset(start, ReadMinRows(5)) == start
    clock.now += 2
    assert reader.latestOffset(start, ReadMinRows(5)) == {"t": {"0": 3}}
    cluster.log[P0] = (0, 9)
    assert reader.latestOffset({"t": {"0": 3}}, ReadMinRows(5)) == {"t": {"0": 9}}


def test_available_now_stops_at_the_offsets_present_when_it_began_and_honours_limits():
    cluster = FakeCluster({P0: (0, 10)})
    reader = make_reader(cluster, maxOffsetsPerTrigger="4", minOffsetsPerTrigger="4")
    reader.prepareForTriggerAvailableNow()
    cluster.log[P0] = (0, 50)
    offsets, start = [], {"t": {"0": 0}}
    while True:
        end = reader.latestOffset(start, ReadMaxRows(4))
        if end == start:
            break
        offsets.append(end["t"]["0"])
        start = end
    assert offsets == [4, 8, 10]


def test_data_deleted_ahead_of_the_query_fails_it_naming_partition_and_offsets():
    reader = make_reader(FakeCluster({P0: (30, 40)}))
    with pytest.raises(DataLossError, match=r"Partition t-0 lost data: 10 offsets \[20, 30\)"):
        reader.latestOffset({"t": {"0": 20}}, ReadAllAvailable())
    with pytest.raises(DataLossError):
        reader.partitions({"t": {"0": 20}}, {"t": {"0": 40}})


def test_without_fail_on_data_loss_the_query_warns_and_continues_from_the_log_start(caplog):
    reader = make_reader(FakeCluster({P0: (30, 40)}), failOnDataLoss="false")
    with caplog.at_level(logging.WARNING, logger="spark_ext.data_loss"):
        end = reader.latestOffset({"t": {"0": 20}}, ReadAllAvailable())
        planned = ranges(reader.partitions({"t": {"0": 20}}, end))
    assert end == {"t": {"0": 40}}
    assert planned == [(0, 30, 40)]
    assert "[20, 30)" in caplog.text


def test_a_new_partition_whose_first_records_were_deleted_counts_as_data_loss():
    reader = make_reader(FakeCluster({P0: (0, 10), P1: (5, 8)}))
    with pytest.raises(DataLossError, match=r"t-1 lost data: 5 offsets \[0, 5\)"):
        reader.latestOffset({"t": {"0": 10}}, ReadAllAvailable())


def test_partitions_split_for_min_partitions_and_plan_nothing_for_an_empty_batch():
    reader = make_reader(FakeCluster({P0: (0, 100)}), minPartitions="4")
    assert ranges(reader.partitions({"t": {"0": 0}}, {"t": {"0": 100}})) == [
        (0, 0, 25), (0, 25, 50), (0, 50, 75), (0, 75, 100)
    ]
    assert reader.partitions({"t": {"0": 100}}, {"t": {"0": 100}}) == []
    assert all(isinstance(p, OffsetRangePartition) for p in reader.partitions({"t": {"0": 0}}, {"t": {"0": 5}}))


def test_a_micro_batch_of_short_ranges_is_read_by_one_task():
    cluster = FakeCluster({P0: (0, 100), P1: (0, 100)})
    planned = make_reader(cluster).partitions({"t": {"0": 0, "1": 0}}, {"t": {"0": 60, "1": 70}})
    assert len(planned) == 1 and isinstance(planned[0], OffsetRangesPartition)
    assert ranges(planned) == [(0, 0, 60), (1, 0, 70)]


def test_ranges_of_min_records_per_partition_or_more_get_a_task_each():
    cluster = FakeCluster({P0: (0, 100), P1: (0, 100)})
    reader = make_reader(cluster, minRecordsPerPartition="50")
    planned = reader.partitions({"t": {"0": 0, "1": 0}}, {"t": {"0": 60, "1": 70}})
    assert all(isinstance(p, OffsetRangePartition) for p in planned) and len(planned) == 2


def test_group_id_commits_each_batch_end_and_the_processed_start_once():
    cluster = FakeCluster({P0: (0, 10)})
    reader = make_reader(cluster, groupId="lag-watch")
    reader.commit({"t": {"0": 4}})
    reader.latestOffset({"t": {"0": 4}}, ReadAllAvailable())
    reader.latestOffset({"t": {"0": 4}}, ReadAllAvailable())
    reader.commit({"t": {"0": 10}})
    assert cluster.admin.commits == [("lag-watch", {P0: 4}), ("lag-watch", {P0: 10})]


def test_a_failed_group_commit_is_logged_and_does_not_fail_the_query(caplog):
    cluster = FakeCluster({P0: (0, 10)})
    cluster.admin.fail = True
    reader = make_reader(cluster, groupId="lag-watch")
    with caplog.at_level(logging.WARNING, logger="spark_ext.group_commit"):
        reader.commit({"t": {"0": 10}})
    assert "could not commit offsets" in caplog.text and "lag-watch" in caplog.text


def test_without_group_id_nothing_is_committed():
    cluster = FakeCluster({P0: (0, 10)})
    reader = make_reader(cluster)
    reader.commit({"t": {"0": 10}})
    assert cluster.admin.commits == []


def test_the_reader_pickles_without_its_clients_and_stop_closes_them():
    cluster = FakeCluster({P0: (0, 10)})
    reader = make_reader(cluster, groupId="g")
    reader.latestOffset({"t": {"0": 0}}, ReadAllAvailable())
    copy = pickle.loads(pickle.dumps(reader))
    assert copy._offsets is None and copy.options == reader.options
    reader.stop()
    assert cluster.closed


def test_a_partition_missing_from_metadata_keeps_its_offset_and_is_not_reread_when_it_returns():
    cluster = FakeCluster({P0: (0, 10), P1: (0, 6)})
    reader = make_reader(cluster)
    away = cluster.log.pop(P1)
    assert reader.latestOffset({"t": {"0": 10, "1": 6}}, ReadAllAvailable()) == {"t": {"0": 10, "1": 6}}
    cluster.log[P1] = (away[0], 8)
    end = reader.latestOffset({"t": {"0": 10, "1": 6}}, ReadAllAvailable())
    assert end == {"t": {"0": 10, "1": 8}}
    assert ranges(reader.partitions({"t": {"0": 10, "1": 6}}, end)) == [(1, 6, 8)]


def test_a_partition_without_an_end_offset_answer_stays_where_it_is():
    class Unanswered(FakeCluster):
        def latest(self, tps):
            return {tp: end for tp, end in super().latest(tps).items() if tp != P1}

    reader = make_reader(Unanswered({P0: (0, 10), P1: (0, 6)}))
    assert reader.latestOffset({"t": {"0": 4, "1": 2}}, ReadAllAvailable()) == {"t": {"0": 10, "1": 2}}
