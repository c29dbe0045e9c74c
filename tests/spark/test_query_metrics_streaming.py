"""A spate → spate streaming query with metricsPort: the driver serves what its tasks read and its sink committed."""

from __future__ import annotations

import pytest

from spark_ext import serve_metrics
from tests.spark.kafka_data import create_topic, produce_values
from tests.support.metrics_scrape import scrape
from tests.support.ports import free_port

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

PARTITIONS = 3
PER_PARTITION = 20


def test_a_copy_query_reports_records_and_bytes_per_partition_group_commits_and_sink_commit_time(
    spark, broker, unique, tmp_path
) -> None:
    source, sink, group = unique("metered-in"), unique("metered-out"), unique("metered-group")
    create_topic(broker.bootstrap, source, PARTITIONS)
    create_topic(broker.bootstrap, sink, 1)
    produce_values(broker.bootstrap, source, PARTITIONS, PER_PARTITION)
    port = free_port()
    # The driver program serves the endpoint; the source's and sink's processes and the tasks report to it.
    url = serve_metrics(port)
    frame = (
        spark.readStream.format("spate")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "25")
        .option("groupId", group)
        .option("metricsPort", str(port))
        .option("metricsQuery", "copy")
        .load()
        .select("key", "value")
    )
    query = (
        frame.writeStream.format("spate")
        .option("bootstrap.servers", broker.bootstrap)
        .option("topic", sink)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .option("metricsPort", str(port))
        .option("metricsQuery", "copy")
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(180), "Trigger.AvailableNow did not stop by itself"
    assert query.exception() is None

    scraped = scrape(url)
    for partition in range(PARTITIONS):
        labels = {"query": "copy", "topic": source, "partition": str(partition)}
        assert scraped.value("spate_spark_source_records_read_total", **labels) == PER_PARTITION
        # Keys "k<i>" and values "<partition>:<i>".
        expected = sum(len(f"k{i}") + len(f"{partition}:{i}") for i in range(PER_PARTITION))
        assert scraped.value("spate_spark_source_bytes_read_total", **labels) == expected
    assert scraped.value("spate_spark_source_group_commits_total", query="copy", group=group) >= 1
    committed = scraped.matching("spate_spark_source_committed_offset", query="copy", group=group, topic=source)
    assert committed and all(0 < s.value <= PER_PARTITION for s in committed)
    batches = scraped.value("spate_spark_sink_commit_time_ms_count", query="copy")
    assert batches >= 3  # 60 offsets at 25 per micro-batch
    assert scraped.value("spate_spark_sink_records_written_total", query="copy", topic=sink) == \
        PARTITIONS * PER_PARTITION
    assert scraped.value("spate_spark_sink_transactions_committed_total", query="copy", topic=sink) >= 1
