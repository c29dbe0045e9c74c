"""Bad options fail the read in Spark with a message naming the option."""

from __future__ import annotations

import pytest

from tests.spark.kafka_data import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def failure_of(action) -> str:
    with pytest.raises(Exception) as caught:
        action()
    return str(caught.value)


def batch(spark, broker, **options):
    read = spark.read.format("spate").option("kafka.bootstrap.servers", broker.bootstrap)
    for name, value in options.items():
        read = read.option(name, value)
    return read.load().collect()


def stream(spark, broker, tmp_path, **options):
    read = spark.readStream.format("spate").option("kafka.bootstrap.servers", broker.bootstrap)
    for name, value in options.items():
        read = read.option(name, value)
    query = read.load().writeStream.format("noop").option("checkpointLocation", str(tmp_path / "ckpt")).start()
    try:
        query.awaitTermination(60)
    finally:
        query.stop()


def test_subscribe_and_assign_together_fail_a_batch_read_naming_both(spark, broker):
    message = failure_of(lambda: batch(spark, broker, subscribe="a", assign='{"a":[0]}'))
    assert "spate source option 'assign'" in message and "subscribe and assign" in message


def test_an_unknown_option_fails_the_read_naming_it(spark, broker):
    message = failure_of(lambda: batch(spark, broker, subscribe="a", startingOffest="earliest"))
    assert "spate source option 'startingoffest'" in message


def test_a_bad_trigger_limit_fails_the_stream_naming_it(spark, broker, tmp_path):
    message = failure_of(lambda: stream(spark, broker, tmp_path, subscribe="a", maxOffsetsPerTrigger="lots"))
    assert "spate source option 'maxOffsetsPerTrigger'" in message


def test_ending_offsets_fail_a_stream_naming_the_option(spark, broker, tmp_path):
    message = failure_of(lambda: stream(spark, broker, tmp_path, subscribe="a", endingOffsets="latest"))
    assert "spate source option 'endingOffsets'" in message and "batch" in message


def test_offsets_json_naming_a_partition_that_is_not_read_fails_naming_the_option(spark, broker, unique):
    topic = unique("json")
    create_topic(broker.bootstrap, topic, 1)
    message = failure_of(lambda: batch(spark, broker, subscribe=topic,
                                       startingOffsets=f'{{"{topic}":{{"0":0,"5":0}}}}'))
    assert "spate source option 'startingOffsets'" in message and f"{topic}-5" in message
