"""Parsing the source's options: Spark's Kafka source names, aliases, and errors that name the option."""

from __future__ import annotations

import pytest

from spark_ext.consumer_strategy import Assign, Subscribe, SubscribePattern
from spark_ext.offset_spec import (
    Earliest,
    GlobalTimestamp,
    Latest,
    SpecificOffsets,
    SpecificTimestamps,
)
from spark_ext.options import SourceOptionError, parse_source_options
from spate.client import TopicPartition

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "orders"}


def parse(streaming: bool = False, **options: str):
    return parse_source_options({**BASE, **options}, streaming=streaming)


def error(streaming: bool = False, base: dict | None = None, **options: str) -> SourceOptionError:
    with pytest.raises(SourceOptionError) as caught:
        parse_source_options({**(BASE if base is None else base), **options}, streaming=streaming)
    return caught.value


def test_defaults_match_the_kafka_source():
    batch, streaming = parse(), parse(streaming=True)
    assert batch.starting == Earliest() and batch.ending == Latest()
    assert streaming.starting == Latest() and streaming.ending is None
    assert batch.fail_on_data_loss is True and batch.include_headers is False
    assert batch.isolation_level == "read_uncommitted"
    assert batch.max_trigger_delay_ms == 15 * 60_000
    assert batch.group_id is None


def test_option_names_are_case_insensitive():
    options = parse_source_options({"KAFKA.BOOTSTRAP.SERVERS": "h:1", "Subscribe": "a", "STARTINGOFFSETS": "latest"},
                                   streaming=True)
    assert options.bootstrap_servers == "h:1" and options.strategy == Subscribe(("a",))
    assert options.starting == Latest()


def test_bootstrap_servers_accepts_the_kafka_prefixed_alias_and_refuses_two_different_values():
    assert parse_source_options({"bootstrap.servers": "h:1", "subscribe": "a"}, streaming=False).bootstrap_servers == "h:1"
    assert error(**{"bootstrap.servers": "other:2"}).option == "bootstrap.servers"
    assert error(base={"subscribe": "a"}).option == "kafka.bootstrap.servers"
    assert error(**{"kafka.bootstrap.servers": "no-port"}).option == "kafka.bootstrap.servers"


def test_exactly_one_consumer_strategy_is_required():
    both = error(assign='{"orders":[0]}')
    assert both.option == "assign" and "subscribe and assign" in str(both)
    assert error(base={"kafka.bootstrap.servers": "h:1"}).option == "subscribe"
    assert error(subscribe=" , ").option == "subscribe"


def test_the_three_strategies_parse():
    assert parse(subscribe="a, b,a").strategy == Subscribe(("a", "b"))
    pattern = parse_source_options({"bootstrap.servers": "h:1", "subscribePattern": "orders-.*"}, streaming=False)
    assert pattern.strategy == SubscribePattern("orders-.*")
    assigned = parse_source_options({"bootstrap.servers": "h:1", "assign": '{"a":[1,0],"b":[2]}'}, streaming=False)
    assert assigned.strategy == Assign((TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 2)))


def test_bad_strategy_values_name_their_option():
    base = {"bootstrap.servers": "h:1"}
    assert error(base={**base, "subscribePattern": "(unclosed"}).option == "subscribePattern"
    assert error(base={**base, "assign": "[0, 1]"}).option == "assign"
    assert error(base={**base, "assign": '{"a":["x"]}'}).option == "assign"


def test_unknown_and_unsupported_options_are_refused_by_name():
    assert error(startingOffset="earliest").option == "startingoffset"
    assert "not an option" in str(error(colour="blue"))
    unsupported = error(**{"kafka.send.buffer.bytes": "1"})
    assert unsupported.option == "kafka.send.buffer.bytes" and "not a consumer setting" in str(unsupported)


def test_consumer_settings_the_kafka_source_forbids_are_refused_with_the_alternative():
    reset = error(**{"kafka.auto.offset.reset": "earliest"})
    assert reset.option == "kafka.auto.offset.reset" and "startingOffsets" in str(reset)
    assert "groupId" in str(error(**{"kafka.enable.auto.commit": "true"}))


def test_supported_consumer_settings_reach_the_consumer_and_admin():
    options = parse(**{"kafka.max.partition.fetch.bytes": "8388608", "kafka.request.timeout.ms": "5000",
                       "kafka.check.crcs": "false", "kafka.security.protocol": "plaintext"})
    assert options.consumer_settings == {
        "max_partition_fetch_bytes": 8_388_608, "request_timeout_ms": 5000, "check_crcs": False,
        "security_protocol": "PLAINTEXT",
    }
    assert options.admin_settings() == {"request_timeout_ms": 5000, "security_protocol": "PLAINTEXT"}
    assert error(**{"kafka.fetch.max.bytes": "0"}).option == "kafka.fetch.max.bytes"
    assert error(**{"kafka.security.protocol": "TLS"}).option == "kafka.security.protocol"


def test_starting_offsets_json_keeps_earliest_and_latest_markers():
    spec = parse(streaming=True, startingOffsets='{"orders":{"0":23,"1":-2,"2":-1}}').starting
    assert spec == SpecificOffsets(
        {TopicPartition("orders", 0): 23, TopicPartition("orders", 1): -2, TopicPartition("orders", 2): -1},
        "startingOffsets",
    )


def test_batch_reads_refuse_starting_at_latest_and_ending_at_earliest():
    assert error(startingOffsets="latest").option == "startingOffsets"
    assert error(startingOffsets='{"orders":{"0":-1}}').option == "startingOffsets"
    assert error(endingOffsets="earliest").option == "endingOffsets"
    assert error(endingOffsets='{"orders":{"0":-2}}').option == "endingOffsets"


def test_ending_options_are_refused_in_streaming_queries():
    for name, value in (("endingOffsets", "latest"), ("endingTimestamp", "5"),
                        ("endingOffsetsByTimestamp", '{"orders":{"0":5}}')):
        failure = error(streaming=True, **{name: value})
        assert failure.option == name and "batch" in str(failure)


def test_malformed_offset_json_names_the_option():
    assert error(startingOffsets='{"orders": {"0": "x"}}').option == "startingOffsets"
    assert error(endingOffsets="{not json").option == "endingOffsets"
    assert error(startingOffsets='{"orders":{"0":-3}}').option == "startingOffsets"


def test_timestamps_take_precedence_over_offsets_as_in_spark():
    both = parse(startingOffsets="earliest", startingTimestamp="1000",
                 startingOffsetsByTimestamp='{"orders":{"0":5}}')
    assert both.starting == GlobalTimestamp(1000, "startingTimestamp")
    by_partition = parse(startingOffsets="earliest", startingOffsetsByTimestamp='{"orders":{"0":5}}')
    assert by_partition.starting == SpecificTimestamps({TopicPartition("orders", 0): 5}, "startingOffsetsByTimestamp")
    assert error(startingTimestamp="-1").option == "startingTimestamp"
    assert error(startingOffsetsByTimestampStrategy="closest").option == "startingOffsetsByTimestampStrategy"


def test_trigger_limits_parse_numbers_sizes_and_durations():
    options = parse(streaming=True, maxOffsetsPerTrigger="1000", minOffsetsPerTrigger="10",
                    maxTriggerDelay="30s", maxBytesPerTrigger="512k")
    assert options.max_offsets_per_trigger == 1000 and options.min_offsets_per_trigger == 10
    assert options.max_trigger_delay_ms == 30_000
    assert options.max_bytes_per_trigger == 512 * 1024
    assert parse(maxTriggerDelay="250").max_trigger_delay_ms == 250
    assert parse(maxBytesPerTrigger="1000").max_bytes_per_trigger == 1000


def test_bad_trigger_limits_name_their_option():
    assert error(maxOffsetsPerTrigger="many").option == "maxOffsetsPerTrigger"
    assert error(maxOffsetsPerTrigger="0").option == "maxOffsetsPerTrigger"
    assert error(maxBytesPerTrigger="0").option == "maxBytesPerTrigger"
    assert error(maxTriggerDelay="soon").option == "maxTriggerDelay"
    assert error(minPartitions="-1").option == "minPartitions"
    contradictory = error(maxOffsetsPerTrigger="10", minOffsetsPerTrigger="20")
    assert contradictory.option == "minOffsetsPerTrigger" and "maxOffsetsPerTrigger" in str(contradictory)


def test_short_ranges_share_tasks_by_default_and_min_records_per_partition_sets_how_short():
    assert parse().min_records_per_partition == 16_384
    assert parse(minRecordsPerPartition="1").min_records_per_partition == 1
    assert error(minRecordsPerPartition="0").option == "minRecordsPerPartition"
    assert error(minRecordsPerPartition="few").option == "minRecordsPerPartition"


def test_isolation_level_and_group_id_accept_their_kafka_prefixed_aliases():
    assert parse(**{"kafka.isolation.level": "READ_COMMITTED"}).isolation_level == "read_committed"
    assert parse(**{"isolation.level": "read_committed"}).isolation_level == "read_committed"
    assert error(**{"isolation.level": "serializable"}).option == "isolation.level"
    assert error(**{"isolation.level": "read_committed", "kafka.isolation.level": "read_uncommitted"}).option \
        == "isolation.level"
    assert parse(groupId="lag-watch").group_id == "lag-watch"
    assert parse(**{"kafka.group.id": "lag-watch"}).group_id == "lag-watch"
    assert error(groupId="a", **{"kafka.group.id": "b"}).option == "groupId"


def test_booleans_must_be_true_or_false():
    assert parse(failOnDataLoss="FALSE").fail_on_data_loss is False
    assert parse(includeHeaders="true").include_headers is True
    assert error(failOnDataLoss="no").option == "failOnDataLoss"


def test_spark_kafka_options_without_meaning_here_are_accepted_so_jobs_run_unchanged():
    options = parse(groupIdPrefix="spark-kafka", **{"fetchOffset.numRetries": "3",
                                                     "kafkaConsumer.pollTimeoutMs": "5000"})
    assert options.poll_timeout_ms == 5000
