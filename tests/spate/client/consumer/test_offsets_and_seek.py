"""Positions, seeks, offset lookups, and what happens when a position falls outside the log."""

from __future__ import annotations

import pytest

from spate.client import (
    EARLIEST,
    LATEST,
    Admin,
    Consumer,
    NoOffsetForPartitionError,
    OffsetOutOfRangeError,
    Producer,
    TopicPartition,
)
from tests.spate.client.conftest import (
    CLIENT_TIMEOUT_MS,
    TANSU_DELETE_RECORDS_UNIMPLEMENTED,
    TANSU_LIST_OFFSETS_BY_TIME_BUG,
    TANSU_LIST_OFFSETS_LATEST_BUG,
    consume,
    create_topic,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

BASE_MS = 1_700_000_000_000


def filled_topic(broker, name: str, count: int = 100) -> TopicPartition:
    """One partition holding ``count`` records with timestamps BASE_MS + 10 * offset."""
    topic = create_topic(broker.bootstrap, name, 1)
    with Producer(broker.bootstrap, **broker.producer_settings()) as producer:
        for i in range(count):
            producer.send(topic, str(i).encode(), timestamp=BASE_MS + 10 * i)
        producer.flush(30)
    return TopicPartition(topic, 0)


def consumer_for(broker, tp: TopicPartition, reset: str = "earliest") -> Consumer:
    consumer = Consumer(broker.bootstrap, auto_offset_reset=reset, default_api_timeout_ms=CLIENT_TIMEOUT_MS)
    consumer.assign([tp])
    return consumer


def test_beginning_and_end_offsets_bound_the_log(broker, topic_name) -> None:
    tp = filled_topic(broker, topic_name(), 40)
    with consumer_for(broker, tp) as consumer:
        assert consumer.beginning_offsets([tp]) == {tp: 0}
        broker.skip_on_tansu(TANSU_LIST_OFFSETS_LATEST_BUG)
        assert consumer.end_offsets([tp]) == {tp: 40}


def test_offsets_for_times_finds_the_first_record_at_or_after_each_timestamp(broker, topic_name) -> None:
    broker.skip_on_tansu(TANSU_LIST_OFFSETS_BY_TIME_BUG)
    tp = filled_topic(broker, topic_name())
    with consumer_for(broker, tp) as consumer:
        exact = consumer.offsets_for_times({tp: BASE_MS + 250})[tp]
        between = consumer.offsets_for_times({tp: BASE_MS + 251})[tp]
        before = consumer.offsets_for_times({tp: 0})[tp]
        after = consumer.offsets_for_times({tp: BASE_MS + 10_000})[tp]
    assert (exact.offset, exact.timestamp) == (25, BASE_MS + 250)
    assert (between.offset, between.timestamp) == (26, BASE_MS + 260)
    assert before.offset == 0
    assert after is None


def test_seek_moves_the_next_poll_to_the_given_offset(broker, topic_name) -> None:
    tp = filled_topic(broker, topic_name())
    with consumer_for(broker, tp) as consumer:
        first = consume(consumer, 10)
        assert first[0].offset == 0
        consumer.seek(tp, 73)
        assert consumer.position(tp) == 73
        assert [r.offset for r in consume(consumer, 27)] == list(range(73, 100))


def test_seek_to_beginning_and_end_resolve_lazily_to_the_log_bounds(broker, topic_name) -> None:
    broker.skip_on_tansu(TANSU_LIST_OFFSETS_LATEST_BUG)
    tp = filled_topic(broker, topic_name(), 30)
    with consumer_for(broker, tp, reset="latest") as consumer:
        assert consumer.position(tp) == 30
        consumer.seek_to_beginning(tp)
        assert consumer.position(tp) == 0
        assert consume(consumer, 30)[-1].offset == 29
        consumer.seek_to_beginning()
        consumer.seek_to_end()
        assert consumer.position(tp) == 30
        assert consumer.poll(timeout_ms=200) == []


def test_paused_partitions_are_not_fetched_until_resumed(broker, topic_name) -> None:
    tp = filled_topic(broker, topic_name(), 20)
    with consumer_for(broker, tp) as consumer:
        consumer.pause(tp)
        assert consumer.paused() == {tp}
        assert consumer.poll(timeout_ms=300) == []
        assert consumer.position(tp) == 0
        consumer.resume(tp)
        assert [r.offset for r in consume(consumer, 20)] == list(range(20))


def test_a_position_below_the_log_start_raises_naming_partition_and_offsets(broker, topic_name) -> None:
    broker.skip_on_tansu(TANSU_DELETE_RECORDS_UNIMPLEMENTED)
    tp = filled_topic(broker, topic_name(), 50)
    with Admin(broker.bootstrap) as admin:
        assert admin.delete_records({tp: 20}) == {tp: 20}
    with consumer_for(broker, tp, reset="none") as consumer:
        consumer.seek(tp, 5)
        with pytest.raises(OffsetOutOfRangeError) as raised:
            consume(consumer, 1)
    error = raised.value
    assert (error.topic_partition, error.offset, error.log_start_offset, error.high_watermark) == (tp, 5, 20, 50)
    assert str(tp) in str(error) and "5" in str(error) and "[20, 50)" in str(error)


@pytest.mark.parametrize(("reset", "first"), [("earliest", 20), ("latest", 50)])
def test_a_position_below_the_log_start_resets_per_auto_offset_reset(broker, topic_name, reset, first) -> None:
    broker.skip_on_tansu(TANSU_DELETE_RECORDS_UNIMPLEMENTED)
    tp = filled_topic(broker, topic_name(), 50)
    with Admin(broker.bootstrap) as admin:
        admin.delete_records({tp: 20})
    with consumer_for(broker, tp, reset=reset) as consumer:
        consumer.seek(tp, 5)
        if reset == "earliest":
            assert consume(consumer, 1)[0].offset == first
        else:
            assert consumer.poll(timeout_ms=500) == []
            assert consumer.position(tp) == first


def test_a_new_partition_without_a_position_needs_a_seek_when_reset_is_none(broker, topic_name) -> None:
    tp = filled_topic(broker, topic_name(), 5)
    with consumer_for(broker, tp, reset="none") as consumer:
        with pytest.raises(NoOffsetForPartitionError, match=str(tp)):
            consumer.poll(timeout_ms=500)
        consumer.seek(tp, 3)
        assert [r.offset for r in consume(consumer, 2)] == [3, 4]


def test_admin_list_offsets_by_spec(broker, topic_name) -> None:
    tp = filled_topic(broker, topic_name(), 30)
    with Admin(broker.bootstrap) as admin:
        assert admin.list_offsets({tp: EARLIEST})[tp].offset == 0
        broker.skip_on_tansu(TANSU_LIST_OFFSETS_LATEST_BUG)
        assert admin.list_offsets({tp: LATEST})[tp].offset == 30
