"""The exactly-once protocol driven by hand: the writer objects without Spark, against a real broker.

Spark calls ``write`` in each task and ``commit``/``abort`` on the driver;
here the test plays both parts, so it can crash "the driver" between them
and replay a batch the way a restarted query does.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from spark_ext.batch_writer import SpateBatchWriter
from spark_ext.sink_commit import SinkCommitError
from spark_ext.sink_options import parse_sink_options
from spark_ext.sink_schema import SinkColumns
from spark_ext.sink_task import SinkCommitMessage, TaskInfo
from spark_ext.stream_writer import SpateStreamWriter
from spate.client import Admin, TopicPartition
from tests.spark.kafka_data import create_topic
from tests.spark.sink.kafka_io import read_all

COLUMNS = SinkColumns(value="value", key="key")


def rows(*values: str) -> list[pa.RecordBatch]:
    return [pa.record_batch({"key": pa.array(list(values)), "value": pa.array(list(values))})]


class Sink:
    """One streaming sink (one query) whose tasks and driver the test runs itself."""

    def __init__(self, bootstrap: str, topic: str, prefix: str, **options: str) -> None:
        self.options = parse_sink_options(
            {"bootstrap.servers": bootstrap, "topic": topic, "transactionalIdPrefix": prefix, **options},
            streaming=True,
        )

    def task(
        self, partition: int, batch: int, values: list[pa.RecordBatch], query: str = "query-1"
    ) -> SinkCommitMessage:
        info = TaskInfo(partition, 0, batch, query)
        writer = SpateStreamWriter(self.options, COLUMNS, task_info=lambda: info)
        return writer.write(iter(values))

    def commit(self, messages: list[SinkCommitMessage], batch: int) -> None:
        SpateStreamWriter(self.options, COLUMNS).commit(messages, batch)

    def abort(self, messages: list[SinkCommitMessage], batch: int) -> None:
        SpateStreamWriter(self.options, COLUMNS).abort(messages, batch)


@pytest.fixture
def out(broker, unique) -> str:
    topic = unique("out")
    create_topic(broker.bootstrap, topic, 2)
    return topic


def committed_values(broker, topic: str, expect: int) -> list[bytes]:
    return sorted(r.value for r in read_all(broker.bootstrap, {topic: 2}, expect=expect, quiet_s=1.0))


def test_replaying_a_committed_batch_writes_nothing(broker, unique, out) -> None:
    sink = Sink(broker.bootstrap, out, unique("sink"))
    first = [sink.task(0, 0, rows("a", "b")), sink.task(1, 0, rows("c"))]
    sink.commit(first, 0)

    replay = [sink.task(0, 0, rows("a", "b")), sink.task(1, 0, rows("c"))]
    sink.commit(replay, 0)

    assert [m.already_committed for m in replay] == [True, True]
    assert [m.transaction for m in replay] == [None, None]
    assert committed_values(broker, out, 3) == [b"a", b"b", b"c"]


def test_batch_left_uncommitted_by_a_crashed_driver_is_written_again_once(broker, unique, out) -> None:
    sink = Sink(broker.bootstrap, out, unique("sink"))
    sink.commit([sink.task(0, 0, rows("zero"))], 0)
    lost = [sink.task(0, 1, rows("one")), sink.task(1, 1, rows("uno"))]  # the driver dies before commit

    replay = [sink.task(0, 1, rows("one")), sink.task(1, 1, rows("uno"))]
    sink.commit(replay, 1)

    assert not any(m.already_committed for m in replay)
    assert committed_values(broker, out, 3) == [b"one", b"uno", b"zero"]
    # The dead driver's messages name fenced transactions: committing them now must fail, not duplicate.
    with pytest.raises(SinkCommitError, match="could not be committed"):
        sink.commit(lost, 1)


def test_partially_committed_batch_replays_only_the_uncommitted_tasks(broker, unique, out) -> None:
    sink = Sink(broker.bootstrap, out, unique("sink"))
    messages = [sink.task(0, 0, rows("p0")), sink.task(1, 0, rows("p1"))]
    sink.commit(messages[:1], 0)  # the driver dies after committing task 0 only

    replay = [sink.task(0, 0, rows("p0")), sink.task(1, 0, rows("p1"))]
    sink.commit(replay, 0)

    assert [m.already_committed for m in replay] == [True, False]
    assert committed_values(broker, out, 2) == [b"p0", b"p1"]


def test_aborted_batch_is_invisible_and_its_replay_is_written(broker, unique, out) -> None:
    sink = Sink(broker.bootstrap, out, unique("sink"))
    sink.abort([sink.task(0, 0, rows("x")), None], 0)
    sink.commit([sink.task(0, 0, rows("x")), sink.task(1, 0, rows("y"))], 0)

    assert committed_values(broker, out, 2) == [b"x", b"y"]
    everything = read_all(broker.bootstrap, {out: 2}, isolation="read_uncommitted", expect=3, quiet_s=1.0)
    assert sorted(r.value for r in everything) == [b"x", b"x", b"y"]


def test_empty_task_opens_no_transaction(broker, unique, out) -> None:
    sink = Sink(broker.bootstrap, out, unique("sink"))
    message = sink.task(0, 0, [pa.record_batch({"key": pa.array([], pa.string()), "value": pa.array([], pa.string())})])
    assert (message.rows, message.transaction, message.already_committed) == (0, None, False)


def test_the_batch_id_is_recorded_in_the_task_group_only_when_the_driver_commits(broker, unique, out) -> None:
    prefix = unique("sink")
    sink = Sink(broker.bootstrap, out, prefix)
    key = TopicPartition(sink.options.bookkeeping_topic, 0)
    message = sink.task(1, 7, rows("v"))
    with Admin(broker.bootstrap) as admin:
        assert admin.list_group_offsets(f"{prefix}-1", [key]) == {}
        sink.commit([message], 7)
        recorded = admin.list_group_offsets(f"{prefix}-1", [key])[key]
    assert (recorded.offset, recorded.metadata) == (7, "spate sink batch 7 of query query-1")


def test_a_new_query_reusing_the_prefix_is_not_mistaken_for_a_replay(broker, unique, out) -> None:
    sink = Sink(broker.bootstrap, out, unique("sink"))
    sink.commit([sink.task(0, 0, rows("old"), query="old-checkpoint")], 0)
    fresh = sink.task(0, 0, rows("new"), query="new-checkpoint")  # batch ids start at 0 again
    sink.commit([fresh], 0)

    assert not fresh.already_committed
    assert committed_values(broker, out, 2) == [b"new", b"old"]


def test_at_least_once_task_writes_at_once_and_needs_no_commit(broker, unique, out) -> None:
    sink = Sink(broker.bootstrap, out, unique("sink"), deliveryGuarantee="at_least_once")
    message = sink.task(0, 0, rows("fast", "loose"))
    assert (message.rows, message.transaction) == (2, None)
    assert committed_values(broker, out, 2) == [b"fast", b"loose"]


def test_exactly_once_batch_job_is_visible_only_after_the_driver_commits(broker, unique, out) -> None:
    options = parse_sink_options(
        {"bootstrap.servers": broker.bootstrap, "topic": out, "deliveryGuarantee": "exactly_once"}, streaming=False
    )
    job = SpateBatchWriter(options, COLUMNS)
    retried = SpateBatchWriter(options, COLUMNS, job_id=job.job_id, task_info=lambda: TaskInfo(0, 0))
    first_attempt = retried.write(iter(rows("a")))
    second_attempt = SpateBatchWriter(options, COLUMNS, job_id=job.job_id, task_info=lambda: TaskInfo(0, 1)).write(
        iter(rows("a"))
    )
    other_task = SpateBatchWriter(options, COLUMNS, job_id=job.job_id, task_info=lambda: TaskInfo(1, 0)).write(
        iter(rows("b"))
    )
    assert read_all(broker.bootstrap, {out: 2}, quiet_s=1.0) == []
    job.commit([second_attempt, other_task])

    assert first_attempt.transaction.transactional_id == second_attempt.transaction.transactional_id
    assert committed_values(broker, out, 2) == [b"a", b"b"]
