"""Reading one offset range on an executor, against a scripted consumer."""

from __future__ import annotations

import pytest

from spark_ext.consumer_cache import ConsumerCache
from spark_ext.data_loss import DataLossError
from spark_ext.offset_ranges import OffsetRange
from spark_ext.partition_reader import RangeReadTimeoutError, ReadSettings, read_range
from spate.client import OffsetOutOfRangeError, RawBatch, TopicPartition
from spate.records import Record, build_batch
from spate.records.batch import validate_batch
from spate.records.errors import CorruptRecordError

TP = TopicPartition("t", 0)


def batch(offsets: list[int], next_offset: int | None = None, start: int | None = None) -> RawBatch:
    """A fetched batch holding ``offsets`` (gaps: compacted away), continuing at ``next_offset``."""
    base = offsets[0]
    last_delta = (next_offset if next_offset is not None else offsets[-1] + 1) - 1 - base
    records = [Record(o, 1_000 + o, None, b"%d" % o) for o in offsets]
    data = build_batch(records, base_offset=base, last_offset_delta=last_delta)
    return RawBatch("t", 0, data, validate_batch(data), base if start is None else start)


class ScriptedConsumer:
    """Answers each poll from a script: a list of batches (the position moves past them), or an exception.

    ``("skip", n)`` moves the position to ``n`` with no batches: what the client does when a fetch
    held only transaction markers or aborted data.
    """

    def __init__(self, script, log_start: int = 0) -> None:
        self.script = list(script)
        self.log_start = log_start
        self.position_ = None
        self.seeks: list[int] = []
        self.closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self, timeout_ms=None):
        self.closed = True

    def assign(self, tps):
        assert list(tps) == [TP]

    def seek(self, tp, offset):
        self.position_ = offset
        self.seeks.append(offset)

    def position(self, tp):
        return self.position_

    def beginning_offsets(self, tps):
        return {tp: self.log_start for tp in tps}

    def poll_raw_batches(self, timeout_ms=0):
        if not self.script:
            return []
        step = self.script.pop(0)
        if isinstance(step, Exception):
            raise step
        if isinstance(step, tuple) and step[0] == "skip":
            self.position_ = step[1]
            return []
        self.position_ = step[-1].next_offset
        return step


def read(rng: OffsetRange, consumer: ScriptedConsumer, **settings) -> list[int]:
    options = ReadSettings("h:1", **settings)
    return [o for b in read_range(rng, options, consumer_factory=lambda _: consumer) for o in b.column("offset").to_pylist()]


def test_a_range_ending_in_a_marker_gap_finishes_when_the_position_passes_its_end():
    consumer = ScriptedConsumer([[batch([0, 1, 2])], ("skip", 4)])
    assert read(OffsetRange("t", 0, 0, 4), consumer) == [0, 1, 2]
    assert consumer.closed


def test_records_at_or_past_the_end_are_cut_off():
    consumer = ScriptedConsumer([[batch([5, 6, 7, 8, 9])]])
    assert read(OffsetRange("t", 0, 5, 8), consumer) == [5, 6, 7]


def test_compacted_gaps_inside_the_range_are_stepped_over():
    consumer = ScriptedConsumer([[batch([0, 3], next_offset=6)], [batch([7, 9])]])
    assert read(OffsetRange("t", 0, 0, 10), consumer) == [0, 3, 7, 9]


def test_deleted_offsets_fail_the_read_naming_partition_and_range():
    consumer = ScriptedConsumer([OffsetOutOfRangeError(TP, 10, 25, 40)])
    with pytest.raises(DataLossError) as failure:
        read(OffsetRange("t", 0, 10, 30), consumer)
    assert (failure.value.lost_from, failure.value.lost_until) == (10, 25)
    assert "Partition t-0 lost data" in str(failure.value) and "[10, 25)" in str(failure.value)


def test_without_fail_on_data_loss_the_read_continues_from_the_log_start():
    consumer = ScriptedConsumer([OffsetOutOfRangeError(TP, 10, 25, 40), [batch([25, 26, 27, 28, 29])]])
    assert read(OffsetRange("t", 0, 10, 30), consumer, fail_on_data_loss=False) == [25, 26, 27, 28, 29]
    assert consumer.seeks == [10, 25]


def test_a_log_start_past_the_whole_range_reads_nothing_when_data_loss_is_allowed():
    consumer = ScriptedConsumer([OffsetOutOfRangeError(TP, 10, -1, -1)], log_start=50)
    assert read(OffsetRange("t", 0, 10, 30), consumer, fail_on_data_loss=False) == []


def test_a_range_beyond_the_log_end_is_an_error_not_data_loss():
    consumer = ScriptedConsumer([OffsetOutOfRangeError(TP, 10, 0, 5)])
    with pytest.raises(OffsetOutOfRangeError):
        read(OffsetRange("t", 0, 10, 30), consumer, fail_on_data_loss=False)


def test_no_progress_for_the_poll_timeout_fails_the_task():
    now = [0.0]

    class Stalled(ScriptedConsumer):
        def poll_raw_batches(self, timeout_ms=0):
            now[0] += 1.0
            return []

    options = ReadSettings("h:1", poll_timeout_ms=3_000)
    with pytest.raises(RangeReadTimeoutError, match=r"t-0: offsets \[0, 5\)"):
        list(read_range(OffsetRange("t", 0, 0, 5), options, consumer_factory=lambda _: Stalled([]),
                        clock=lambda: now[0]))


def test_records_below_a_batchs_start_offset_are_left_out():
    consumer = ScriptedConsumer([[batch([3, 4, 5, 6], start=5)], [batch([7, 8])]])
    assert read(OffsetRange("t", 0, 5, 9), consumer) == [5, 6, 7, 8]


def test_a_batch_wholly_at_or_past_the_end_adds_nothing():
    consumer = ScriptedConsumer([[batch([0, 1]), batch([2, 3])]])
    assert read(OffsetRange("t", 0, 0, 2), consumer) == [0, 1]


def test_large_batches_are_decoded_by_columns_with_values_intact():
    offsets = list(range(100, 400))  # above the vectorised decoder's threshold
    consumer = ScriptedConsumer([[batch(offsets, start=150)]])  # the fetch started at 150
    options = ReadSettings("h:1")
    out = list(read_range(OffsetRange("t", 0, 150, 390), options, consumer_factory=lambda _: consumer))
    assert [o for b in out for o in b.column("offset").to_pylist()] == list(range(150, 390))
    assert [v for b in out for v in b.column("value").to_pylist()] == [b"%d" % o for o in range(150, 390)]
    assert out[0].column("timestamp")[0].as_py().timestamp() == 1.15


def test_many_small_batches_become_one_arrow_batch_with_every_value_and_timestamp():
    # A producer at a low rate sends batches of a few records; they are gathered, not built one by one.
    small = [batch(list(range(first, first + 3)), start=max(first, 4)) for first in range(0, 300, 3)]
    consumer = ScriptedConsumer([small[:50], small[50:]])
    out = list(read_range(OffsetRange("t", 0, 4, 298), ReadSettings("h:1"), consumer_factory=lambda _: consumer))
    assert len(out) == 1
    assert out[0].column("offset").to_pylist() == list(range(4, 298))
    assert out[0].column("value").to_pylist() == [b"%d" % o for o in range(4, 298)]
    assert out[0].column("timestamp")[0].as_py().timestamp() == 1.004


def test_small_and_large_batches_keep_their_order_in_one_arrow_batch():
    script = [[batch([0, 1]), batch(list(range(2, 202))), batch([202, 203]), batch([204])]]
    out = list(read_range(OffsetRange("t", 0, 0, 205), ReadSettings("h:1"),
                          consumer_factory=lambda _: ScriptedConsumer(script)))
    assert [o for b in out for o in b.column("offset").to_pylist()] == list(range(205))


def test_a_corrupt_small_batch_fails_the_read_naming_partition_and_offset():
    good = batch([7, 8, 9])
    broken = bytearray(good.buffer)
    broken[-1] ^= 0xFF
    bad = RawBatch("t", 0, bytes(broken), good.header, 7)
    with pytest.raises(CorruptRecordError, match="t-0 batch at offset 7"):
        read(OffsetRange("t", 0, 7, 10), ScriptedConsumer([[bad]]))


def test_a_corrupt_batch_fails_the_read_naming_partition_and_offset():
    good = batch(list(range(0, 200)))
    broken = bytearray(good.buffer)
    broken[-1] ^= 0xFF  # inside the last record's value length region: the record checks notice
    bad = RawBatch("t", 0, bytes(broken), good.header, 0)
    with pytest.raises(CorruptRecordError, match="t-0 batch at offset 0"):
        read(OffsetRange("t", 0, 0, 200), ScriptedConsumer([[bad]]))


def read_cached(rng: OffsetRange, consumer: ScriptedConsumer, cache: ConsumerCache) -> list[int]:
    options = ReadSettings("h:1")
    batches = read_range(rng, options, consumer_factory=lambda _: consumer, cache=cache)
    return [o for b in batches for o in b.column("offset").to_pylist()]


def test_the_next_range_of_a_partition_continues_with_the_kept_consumer_and_its_fetched_records():
    cache = ConsumerCache()
    consumer = ScriptedConsumer([[batch(list(range(10)))], [batch([10, 11])]])
    assert read_cached(OffsetRange("t", 0, 0, 5), consumer, cache) == [0, 1, 2, 3, 4]
    assert not consumer.closed and len(cache) == 1
    # Offsets 5-9 came with the first fetch: no poll is needed for them.
    assert read_cached(OffsetRange("t", 0, 5, 10), ScriptedConsumer([]), cache) == [5, 6, 7, 8, 9]
    assert read_cached(OffsetRange("t", 0, 10, 12), ScriptedConsumer([]), cache) == [10, 11]
    assert consumer.seeks == [0] and consumer.script == []


def test_a_kept_consumer_seeks_when_the_range_starts_elsewhere():
    cache = ConsumerCache()
    consumer = ScriptedConsumer([[batch(list(range(10)))], [batch([20, 21])]])
    read_cached(OffsetRange("t", 0, 0, 5), consumer, cache)
    assert read_cached(OffsetRange("t", 0, 20, 22), ScriptedConsumer([]), cache) == [20, 21]
    assert consumer.seeks == [0, 20]


def test_a_failed_read_closes_its_consumer_instead_of_keeping_it():
    cache = ConsumerCache()
    consumer = ScriptedConsumer([OffsetOutOfRangeError(TP, 10, 25, 40)])
    with pytest.raises(DataLossError):
        read_cached(OffsetRange("t", 0, 10, 30), consumer, cache)
    assert consumer.closed and len(cache) == 0


def test_a_read_stopped_early_closes_its_consumer():
    cache = ConsumerCache()
    consumer = ScriptedConsumer([[batch(list(range(300)))], [batch(list(range(300, 600)))]])
    settings = ReadSettings("h:1", max_rows_per_batch=100)
    reader = read_range(OffsetRange("t", 0, 0, 600), settings, consumer_factory=lambda _: consumer, cache=cache)
    next(reader)
    reader.close()
    assert consumer.closed and len(cache) == 0
