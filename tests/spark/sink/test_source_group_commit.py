"""``sourceGroupId``: a batch's source offsets committed to the source's group inside the sink's transactions."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from spark_ext.sink_commit import (
    SinkCommitError,
    SourceOffsets,
    batch_source_offsets,
    commit_transactions,
)
from spark_ext.sink_options import SinkOptionError, parse_sink_options
from spark_ext.sink_task import SinkCommitMessage
from spate.client import Admin, ErrorCode, KafkaError, OffsetAndMetadata, TopicPartition
from spate.client.producer.open_transaction import OpenTransaction
from spate.client.producer.transaction_completion import TransactionCompletionError
from tests.spark.kafka_data import create_topic
from tests.spark.sink.kafka_io import end_offsets, produce, read_all

BOOTSTRAP = {"kafka.bootstrap.servers": "127.0.0.1:9092"}
SOURCE = SourceOffsets(
    group_id="G",
    offsets={TopicPartition("in", 0): OffsetAndMetadata(12, "m"), TopicPartition("in", 1): OffsetAndMetadata(8, "m")},
    transactional_id="sink-offsets",
)


# --- options ---------------------------------------------------------------------------------------


def test_source_group_id_is_kept_with_the_local_checkpoint_directory(tmp_path: Path) -> None:
    options = parse_sink_options(
        {**BOOTSTRAP, "checkpointLocation": f"file://{tmp_path}/ck", "SOURCEGROUPID": " G "}, streaming=True
    )
    assert options.source_group_id == "G"
    assert options.checkpoint_dir == f"{tmp_path}/ck"


def test_without_source_group_id_nothing_is_read_from_the_checkpoint() -> None:
    options = parse_sink_options({**BOOTSTRAP, "checkpointLocation": "hdfs://nn/ck"}, streaming=True)
    assert options.source_group_id is None and options.checkpoint_dir is None


@pytest.mark.parametrize(
    ("options", "streaming", "problem"),
    [
        ({"checkpointLocation": "/ck", "sourceGroupId": ""}, True, "is empty"),
        ({"checkpointLocation": "/ck", "sourceGroupId": "G", "topic": "t"}, False, "streaming writes"),
        ({"checkpointLocation": "/ck", "sourceGroupId": "G", "deliveryGuarantee": "at_least_once"}, True,
         "exactly_once"),
        ({"transactionalIdPrefix": "s", "sourceGroupId": "G"}, True, "checkpointLocation"),
        ({"checkpointLocation": "hdfs://nn:8020/ck", "sourceGroupId": "G"}, True, "local filesystem"),
        ({"checkpointLocation": "s3a://bucket/ck", "sourceGroupId": "G"}, True, "local filesystem"),
    ],
    ids=["empty", "batch-write", "at-least-once", "no-checkpoint", "hdfs", "s3a"],
)
def test_source_group_id_is_refused_where_it_cannot_work(options: dict, streaming: bool, problem: str) -> None:
    with pytest.raises(SinkOptionError, match="sourceGroupId") as info:
        parse_sink_options({**BOOTSTRAP, **options}, streaming=streaming)
    assert problem in str(info.value)


# --- the driver's commit, with fake clients ---------------------------------------------------------


@dataclass
class Calls:
    log: list[tuple] = field(default_factory=list)
    refuse_commit: set[str] = field(default_factory=set)
    refuse_offsets: bool = False


class FakeCompleter:
    def __init__(self, calls: Calls) -> None:
        self.calls = calls

    def __enter__(self) -> FakeCompleter:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def complete(self, txn: OpenTransaction, *, commit: bool, timeout_ms: float) -> None:
        self.complete_all([txn], commit=commit, timeout_ms=timeout_ms)

    def complete_all(self, transactions, *, commit: bool, timeout_ms: float) -> None:
        refused = []
        for txn in transactions:
            self.calls.log.append(("commit" if commit else "abort", txn.transactional_id))
            if commit and txn.transactional_id in self.calls.refuse_commit:
                refused.append((txn, KafkaError(ErrorCode.PRODUCER_FENCED, "timed out")))
        if refused:
            raise TransactionCompletionError(commit, refused)


class FakeOffsetsWriter(FakeCompleter):
    def add_offsets(self, txn: OpenTransaction, group_id: str, offsets, *, timeout_ms: float) -> None:
        if self.calls.refuse_offsets:
            raise KafkaError(ErrorCode.GROUP_AUTHORIZATION_FAILED, "no")
        self.calls.log.append(("offsets", txn.transactional_id, group_id, dict(offsets)))


class FakeProducer:
    def __init__(self, calls: Calls, transactional_id: str) -> None:
        self.calls = calls
        calls.log.append(("producer", transactional_id))

    def init_transactions(self, timeout_ms: float) -> None:
        self.calls.log.append(("init",))

    def begin_transaction(self) -> None:
        self.calls.log.append(("begin",))

    def send_offsets_to_transaction(self, offsets, group_id: str, timeout_ms: float) -> None:
        self.calls.log.append(("send_offsets", group_id, dict(offsets)))

    def commit_transaction(self, timeout_ms: float) -> None:
        self.calls.log.append(("commit_transaction",))

    def close(self, timeout: float) -> None:
        self.calls.log.append(("close",))


def message(partition: int, transactional_id: str | None) -> SinkCommitMessage:
    txn = None if transactional_id is None else OpenTransaction(transactional_id, 100 + partition, 0)
    return SinkCommitMessage(partition=partition, rows=0 if txn is None else 5, batch_id=3, transaction=txn)


def commit(calls: Calls, messages: list, source: SourceOffsets | None = SOURCE) -> int:
    return commit_transactions(
        "h:1", messages, batch_id=3, timeout_ms=1_000,
        completer_factory=lambda _: FakeCompleter(calls),
        source_offsets=source,
        offsets_writer_factory=lambda _: FakeOffsetsWriter(calls),
        offsets_producer_factory=lambda transactional_id: FakeProducer(calls, transactional_id),
    )


def test_offsets_join_the_first_open_transaction_which_is_committed_after_the_others() -> None:
    calls = Calls()
    assert commit(calls, [message(0, None), message(1, "s-1"), message(2, "s-2"), message(3, "s-3")]) == 3
    assert calls.log[0] == ("offsets", "s-1", "G", dict(SOURCE.offsets))
    assert sorted(calls.log[1:3]) == [("commit", "s-2"), ("commit", "s-3")]  # ended concurrently
    assert calls.log[3:] == [("commit", "s-1")]


def test_when_another_transaction_is_refused_the_offsets_transaction_is_aborted() -> None:
    calls = Calls(refuse_commit={"s-2"})
    with pytest.raises(SinkCommitError, match="micro-batch 3: 1 of 2 transaction"):
        commit(calls, [message(1, "s-1"), message(2, "s-2")])
    assert calls.log[-2:] == [("commit", "s-2"), ("abort", "s-1")]


def test_refused_offsets_fail_the_batch_before_anything_commits() -> None:
    calls = Calls(refuse_offsets=True)
    with pytest.raises(SinkCommitError, match="group 'G' could not join the transaction of 's-1'"):
        commit(calls, [message(1, "s-1"), message(2, "s-2")])
    assert calls.log == []


def test_a_batch_without_open_transactions_commits_the_offsets_in_their_own_transaction() -> None:
    calls = Calls()
    assert commit(calls, [message(0, None), message(1, None)]) == 0
    assert calls.log == [
        ("producer", "sink-offsets"),
        ("init",),
        ("begin",),
        ("send_offsets", "G", dict(SOURCE.offsets)),
        ("commit_transaction",),
        ("close",),
    ]


def test_without_source_offsets_every_transaction_is_committed_as_before() -> None:
    calls = Calls()
    assert commit(calls, [message(1, "s-1"), message(2, "s-2")], source=None) == 2
    assert calls.log == [("commit", "s-1"), ("commit", "s-2")]
    empty = SourceOffsets("G", {}, "sink-offsets")
    assert commit(Calls(), [message(0, None)], source=empty) == 0


def test_batch_source_offsets_come_from_the_checkpoint_with_the_batch_in_their_metadata(tmp_path: Path) -> None:
    (tmp_path / "offsets").mkdir()
    (tmp_path / "offsets" / "5").write_text('v1\n{}\n{"in": {"0": 40}}')
    source = batch_source_offsets("G", str(tmp_path), 5, "sink")
    metadata = OffsetAndMetadata(40, "spate sink sink: micro-batch 5")
    assert source == SourceOffsets("G", {TopicPartition("in", 0): metadata}, "sink-offsets")
    with pytest.raises(SinkCommitError, match="sourceGroupId 'G'.*micro-batch 6 has no offset log"):
        batch_source_offsets("G", str(tmp_path), 6, "sink")


# --- a real query: spate topic → spate topic ---------------------------------------------------------


def committed_offsets(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    wanted = [TopicPartition(topic, p) for p in range(partitions)]
    with Admin(bootstrap) as admin:
        found = admin.list_group_offsets(group, wanted, timeout_ms=30_000)
    return {tp.partition: c.offset for tp, c in found.items() if c is not None}


def run_copy(spark, broker, source: str, sink: str, checkpoint: Path, group: str, *, keep_rows: bool = True) -> None:
    """spate ``source`` → spate ``sink`` under Trigger.AvailableNow, 25 offsets per micro-batch."""
    frame = (
        spark.readStream.format("spate")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "25")
        .load()
        .select("key", "value")
    )
    if not keep_rows:
        frame = frame.where(F.lit(False))
    query = (
        frame.writeStream.format("spate")
        .option("bootstrap.servers", broker.bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", str(checkpoint))
        .option("sourceGroupId", group)
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(180), "Trigger.AvailableNow did not stop by itself"
    if query.exception() is not None:
        raise query.exception()


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_the_source_group_ends_at_the_input_end_and_the_output_holds_every_input_once(
    spark, broker, unique, tmp_path
) -> None:
    source, sink, group = unique("in"), unique("out"), unique("g")
    create_topic(broker.bootstrap, source, 2)
    create_topic(broker.bootstrap, sink, 2)
    values = [b"v-%d" % n for n in range(60)]
    produce(broker.bootstrap, source, values, partitions=2)
    checkpoint = tmp_path / "ckpt"

    run_copy(spark, broker, source, sink, checkpoint, group)

    assert committed_offsets(broker.bootstrap, group, source, 2) == end_offsets(broker.bootstrap, source, 2)
    batches = sorted(int(p.name) for p in (checkpoint / "offsets").iterdir() if p.name.isdigit())
    assert len(batches) >= 2  # 60 offsets at 25 per batch: the group moved with every one
    read = read_all(broker.bootstrap, {sink: 2}, expect=len(values))
    assert sorted(r.value for r in read) == sorted(values)

    more = [b"w-%d" % n for n in range(10)]
    produce(broker.bootstrap, source, more, partitions=2)
    run_copy(spark, broker, source, sink, checkpoint, group)
    assert committed_offsets(broker.bootstrap, group, source, 2) == end_offsets(broker.bootstrap, source, 2)
    read = read_all(broker.bootstrap, {sink: 2}, expect=len(values) + len(more))
    assert sorted(r.value for r in read) == sorted(values + more)


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_batches_that_write_no_rows_still_move_the_source_group(spark, broker, unique, tmp_path) -> None:
    source, sink, group = unique("in"), unique("out"), unique("g")
    create_topic(broker.bootstrap, source, 2)
    create_topic(broker.bootstrap, sink)
    produce(broker.bootstrap, source, [b"x-%d" % n for n in range(30)], partitions=2)

    run_copy(spark, broker, source, sink, tmp_path / "ckpt", group, keep_rows=False)

    assert committed_offsets(broker.bootstrap, group, source, 2) == end_offsets(broker.bootstrap, source, 2)
    assert read_all(broker.bootstrap, {sink: 1}, quiet_s=1.0) == []

