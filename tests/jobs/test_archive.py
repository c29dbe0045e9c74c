"""Retention that archives before it deletes, and one read across the archive and the log.

A topic with a one-day ``retention.ms``, small segments and
``spate.archive.path`` receives records stamped days ago. Retention (run
every 200 ms here) keeps every segment until ``spate jobs run archive``
copies them into the Delta table and reports the archived offsets; then it
deletes them. The ``spate`` source with ``archive=true`` reads every offset
exactly once, the old ones from the table, the rest from the broker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer
from deltalake import DeltaTable

from jobs.archive import ArchiveConfig, ArchiveJobError, run_archive
from spate.client import TopicPartition
from spate.client.admin.archive_offsets import ArchiveOffsetsClient
from spate.job_progress import PROGRESS_FILE_ENV, ProgressEvent, ProgressReader
from spate.protocol import ErrorCode, KafkaError
from tests.jobs.conftest import JOBS_BROKER_OVERRIDES
from tests.spark.kafka_data import produce, produce_transactions, spate_rows
from tests.support.admin_requests import create_topic
from tests.support.broker_process import BrokerProcess, running_broker

REPO = Path(__file__).resolve().parents[2]
DAY_MS = 86_400_000
PARTITIONS = 2
OLD = 200  # records per partition stamped days ago
FRESH = 5  # records per partition stamped now


@pytest.fixture(scope="module")
def archive_broker(tmp_path_factory: pytest.TempPathFactory):
    overrides = {**JOBS_BROKER_OVERRIDES, "log.retention.check.interval.ms": "200", "log.segment.delete.delay.ms": "0"}
    process = BrokerProcess(data_dir=tmp_path_factory.mktemp("archive-broker"), overrides=overrides)
    with running_broker(process) as running:
        yield running


def spate(*args: str, state_dir: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "SPATE_STATE_DIR": str(state_dir), "PYSPARK_PYTHON": sys.executable}
    return subprocess.run([sys.executable, "-m", "spate.cli.main", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


def archiving_topic(broker: BrokerProcess, name: str, table: Path, partitions: int = PARTITIONS) -> None:
    configs = {"retention.ms": str(DAY_MS), "segment.bytes": "4096", "spate.archive.path": str(table)}
    result = create_topic(broker.bootstrap, name, partitions=partitions, replication_factor=1, configs=configs)
    assert result.error_code == 0, result.error_message


def value(partition: int, index: int) -> bytes:
    return f"{partition}:{index}".encode().ljust(100, b".")


def produce_history(broker: BrokerProcess, topic: str) -> None:
    now = int(time.time() * 1000)
    old_start = now - 3 * DAY_MS  # spread over a day and a half, three days ago: several dates
    records = [{"key": f"k{i}".encode(), "value": value(p, i), "partition": p, "headers": [("n", str(i).encode())],
                "timestamp": old_start + i * (DAY_MS * 3 // 2) // OLD} for i in range(OLD) for p in range(PARTITIONS)]
    records += [{"key": f"k{i}".encode(), "value": value(p, i), "partition": p, "headers": [("n", str(i).encode())],
                 "timestamp": now} for i in range(OLD, OLD + FRESH) for p in range(PARTITIONS)]
    produce_in_small_batches(broker.bootstrap, topic, records)


def produce_in_small_batches(bootstrap: str, topic: str, records: list[dict]) -> None:
    """Batches of at most 10 records, so that each fits a small segment; every delivery is checked."""
    failures: list[object] = []
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.num.messages": 10})
    for record in records:
        producer.produce(topic, **record, on_delivery=lambda error, _: error and failures.append(error))
    assert producer.flush(30) == 0, "records undelivered"
    assert failures == []


def states_of(broker: BrokerProcess, topic: str, partitions: int = PARTITIONS):
    with ArchiveOffsetsClient(broker.bootstrap) as client:
        return client.describe([TopicPartition(topic, p) for p in range(partitions)])


def wait_for(condition, what: str, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def read_stream(spark, frame, checkpoint: Path, name: str):
    query = (frame.writeStream.format("memory").queryName(name).option("checkpointLocation", str(checkpoint))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(120), "the AvailableNow query did not finish in time"
    return spark.table(name)


def test_retention_keeps_unarchived_segments_then_deletes_archived_ones_and_reads_span_both(
    archive_broker, spark, unique, tmp_path
):
    topic, table = unique("events"), tmp_path / "archive"
    archiving_topic(archive_broker, topic, table)
    produce_history(archive_broker, topic)

    time.sleep(1.5)  # several retention passes
    before = states_of(archive_broker, topic)
    for state in before.values():
        assert state.log_start_offset == 0, "retention deleted a segment that was never archived"
        assert state.archived_offset is None
        assert 0 < state.archive_target_offset <= OLD
        assert state.archive_lag == state.archive_target_offset
        assert state.archive_path == str(table)

    result = spate("jobs", "run", "archive", "--topic", topic, "--bootstrap-server", archive_broker.bootstrap,
                   "--master", "local[2]", state_dir=tmp_path / "state")
    assert result.returncode == 0, result.stderr[-3000:]

    delta = DeltaTable(str(table))
    assert delta.metadata().partition_columns == ["date"]
    archived = delta.to_pyarrow_table().to_pylist()
    for p, state in before.items():
        offsets = sorted(r["offset"] for r in archived if r["partition"] == p.partition)
        assert offsets == list(range(state.archive_target_offset))
    assert len({r["date"] for r in archived}) >= 2
    assert {r["topic"] for r in archived} == {topic}

    after = wait_for(lambda: (s := states_of(archive_broker, topic)) and all(
        x.log_start_offset > 0 for x in s.values()) and s, "retention to delete the archived segments")
    for tp, state in after.items():
        assert state.archived_offset == before[tp].archive_target_offset
        assert 0 < state.log_start_offset <= state.archived_offset
        assert state.archive_lag == 0

    expected = sorted((p, o, value(p, o)) for p in range(PARTITIONS) for o in range(OLD + FRESH))
    batch = (spark.read.format("spate").option("kafka.bootstrap.servers", archive_broker.bootstrap)
             .option("subscribe", topic).option("archive", "true").option("includeHeaders", "true").load())
    rows = spate_rows(batch)
    assert sorted((r.partition, r.offset, r.value) for r in rows) == expected
    assert all(r.headers == (("n", str(r.offset).encode()),) for r in rows)

    stream = (spark.readStream.format("spate").option("kafka.bootstrap.servers", archive_broker.bootstrap)
              .option("subscribe", topic).option("archive", "true").option("startingOffsets", "earliest")
              .option("maxOffsetsPerTrigger", "150").load())
    streamed = read_stream(spark, stream, tmp_path / "checkpoint", unique("memory").replace("-", "_"))
    got = [(r.partition, r.offset, r.value) for r in streamed.select("partition", "offset", "value").collect()]
    assert sorted(got) == expected and len(got) == len(expected)


def test_a_second_run_copies_nothing_and_reports_the_same_offsets(archive_broker, spark, unique, tmp_path,
                                                                  monkeypatch):
    topic, table = unique("again"), tmp_path / "archive"
    archiving_topic(archive_broker, topic, table)
    produce_history(archive_broker, topic)
    monkeypatch.setenv(PROGRESS_FILE_ENV, str(tmp_path / "run.progress"))
    progress = ProgressReader(tmp_path / "run.progress")
    first = run_archive(spark, ArchiveConfig(topic, archive_broker.bootstrap))
    version = DeltaTable(str(table)).version()
    reported = progress.new_events()
    copied = len(first.ranges)
    assert reported[0] == ProgressEvent("partitions archived", 0, copied) and copied > 0
    assert reported[-1] == ProgressEvent("partitions archived", copied, copied)

    second = run_archive(spark, ArchiveConfig(topic, archive_broker.bootstrap))
    assert progress.new_events() == [ProgressEvent("partitions archived", 0, 0)]

    assert first.offsets_copied > 0 and second.offsets_copied == 0
    assert second.archived == first.archived
    assert DeltaTable(str(table)).version() == version
    rows = DeltaTable(str(table)).to_pyarrow_table(columns=["partition", "offset"]).to_pylist()
    assert len(rows) == len({(r["partition"], r["offset"]) for r in rows})


def test_aborted_transactional_records_are_not_archived(archive_broker, spark, unique, tmp_path):
    topic, table = unique("txn"), tmp_path / "archive"
    archiving_topic(archive_broker, topic, table, partitions=1)
    produce_transactions(archive_broker.bootstrap, topic, unique("txn-id"), [
        ([b"a1", b"a2"], True), ([b"x1", b"x2", b"x3"], False), ([b"b1"], True),
    ])

    summary = run_archive(spark, ArchiveConfig(topic, archive_broker.bootstrap, up_to_stable=True))

    values = [r["value"] for r in sorted(DeltaTable(str(table)).to_pyarrow_table().to_pylist(),
                                         key=lambda r: r["offset"])]
    assert values == [b"a1", b"a2", b"b1"]
    assert summary.archived == {0: states_of(archive_broker, topic, 1)[TopicPartition(topic, 0)].last_stable_offset}


def test_brokers_refuse_archived_offsets_for_a_topic_without_an_archive_or_beyond_the_high_watermark(
    archive_broker, unique, tmp_path
):
    plain = unique("plain")
    assert create_topic(archive_broker.bootstrap, plain, partitions=1, replication_factor=1).error_code == 0
    archiving = unique("archiving")
    archiving_topic(archive_broker, archiving, tmp_path / "archive", partitions=1)
    produce(archive_broker.bootstrap, archiving, [{"value": b"v", "partition": 0}] * 3)

    with ArchiveOffsetsClient(archive_broker.bootstrap) as client:
        with pytest.raises(KafkaError) as no_archive:
            client.record({TopicPartition(plain, 0): 0})
        with pytest.raises(KafkaError) as too_far:
            client.record({TopicPartition(archiving, 0): 4})
        recorded = client.record({TopicPartition(archiving, 0): 2})
        stays = client.record({TopicPartition(archiving, 0): 1})

    assert no_archive.value.code == ErrorCode.INVALID_CONFIG and "spate.archive.path" in str(no_archive.value)
    assert too_far.value.code == ErrorCode.OFFSET_OUT_OF_RANGE and "high watermark" in str(too_far.value)
    assert recorded.recorded == {TopicPartition(archiving, 0): 2}
    assert stays.recorded == {TopicPartition(archiving, 0): 2}, "an archived offset never goes back"


def test_topics_describe_shows_the_archive_lag(archive_broker, unique, tmp_path):
    topic = unique("lag")
    archiving_topic(archive_broker, topic, tmp_path / "archive")
    produce_history(archive_broker, topic)

    result = spate("topics", "describe", topic, "--bootstrap-server", archive_broker.bootstrap, "--output", "json",
                   state_dir=tmp_path / "state", timeout=60)

    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    lags = [row["archive_lag"] for row in document["partitions"]]
    assert all(lag > 0 for lag in lags)
    assert document["configs"]["spate.archive.path"]["value"] == str(tmp_path / "archive")

    table = spate("topics", "describe", topic, "--bootstrap-server", archive_broker.bootstrap,
                  state_dir=tmp_path / "state", timeout=60)
    assert table.returncode == 0, table.stderr
    assert "Archive lag" in table.stdout


def test_archiving_a_topic_without_an_archive_path_fails_naming_the_config(archive_broker, spark, unique):
    plain = unique("plain")
    assert create_topic(archive_broker.bootstrap, plain, partitions=1, replication_factor=1).error_code == 0

    with pytest.raises(ArchiveJobError, match="spate.archive.path"):
        run_archive(spark, ArchiveConfig(plain, archive_broker.bootstrap))
