"""End to end: a topic streamed into Delta, half of it archived and deleted by retention, read back whole.

Records stamped over the last four hours go to an archiving topic with a
two-hour ``retention.ms``; the ingest job streams them into a Delta table;
the archive job copies what retention is about to delete into the topic's
archive, and retention then deletes about half the log. The archive-spanning
``spate`` source still reads every record exactly once, in offset order per
partition. ``SPATE_ARCHIVE_E2E_RECORDS`` sets the record count (4,000 in the
suite; 1000000 for the long variant, 5.5 minutes on two shared cores).
"""

from __future__ import annotations

import os
import time

from confluent_kafka import Producer
from deltalake import DeltaTable

from jobs.archive import ArchiveConfig, run_archive
from jobs.ingest import IngestConfig, start_query
from tests.jobs.test_archive import archive_broker, states_of, wait_for  # noqa: F401 - the module's broker
from tests.support.admin_requests import create_topic

RECORDS = int(os.environ.get("SPATE_ARCHIVE_E2E_RECORDS", "4000"))
PARTITIONS = 2
HOUR_MS = 3_600_000
# About 20 segments per partition (a record takes about 30 bytes in the log).
SEGMENT_BYTES = max(4096, RECORDS * 30 // PARTITIONS // 20)


def produce_over_hours(bootstrap: str, topic: str, records: int) -> None:
    """``records`` values ``<n>`` stamped evenly from four hours ago to now, round-robin over the partitions."""
    now = int(time.time() * 1000)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": SEGMENT_BYTES // 2,
                         "queue.buffering.max.messages": 200_000})
    failures: list[object] = []
    for n in range(records):
        while True:
            try:
                producer.produce(topic, value=b"%09d" % n, key=b"k%d" % (n % 100), partition=n % PARTITIONS,
                                 timestamp=now - 4 * HOUR_MS + n * 4 * HOUR_MS // records,
                                 on_delivery=lambda error, _: error and failures.append(error))
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(120) == 0 and failures == []


def test_a_topic_half_deleted_by_retention_reads_back_whole_across_archive_and_log(
    archive_broker, spark, unique, tmp_path  # noqa: F811
):
    topic, archive = unique("history"), tmp_path / "archive"
    configs = {"retention.ms": str(2 * HOUR_MS), "segment.bytes": str(SEGMENT_BYTES),
               "spate.archive.path": str(archive)}
    assert create_topic(archive_broker.bootstrap, topic, partitions=PARTITIONS, replication_factor=1,
                        configs=configs).error_code == 0
    produce_over_hours(archive_broker.bootstrap, topic, RECORDS)

    ingest = start_query(spark, IngestConfig(topic=topic, table=str(tmp_path / "ingest"),
                                             bootstrap_servers=archive_broker.bootstrap,
                                             checkpoint=str(tmp_path / "checkpoint"), available_now=True))
    assert ingest.awaitTermination(900), "the ingest query did not finish in time"
    assert DeltaTable(str(tmp_path / "ingest")).to_pyarrow_table(columns=["offset"]).num_rows == RECORDS

    run_archive(spark, ArchiveConfig(topic, archive_broker.bootstrap))
    states = wait_for(lambda: (s := states_of(archive_broker, topic)) and all(
        x.log_start_offset >= (x.archived_offset or -1) > 0 for x in s.values()) and s,
        "retention to delete the archived half", timeout=60)
    deleted = sum(s.log_start_offset for s in states.values())
    assert RECORDS * 0.3 < deleted < RECORDS * 0.7, f"retention deleted {deleted} of {RECORDS} records"

    frame = (spark.read.format("spate").option("kafka.bootstrap.servers", archive_broker.bootstrap)
             .option("subscribe", topic).option("archive", "true").load())
    rows = frame.select("partition", "offset", "value").collect()
    assert len(rows) == RECORDS
    for partition in range(PARTITIONS):
        offsets = [r.offset for r in rows if r.partition == partition]
        assert offsets == list(range(len(offsets))), f"partition {partition} is not every offset once, in order"
    assert sorted(int(r.value) for r in rows) == list(range(RECORDS))
