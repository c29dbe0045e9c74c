"""DeleteRecords moves the log start offset, and consumers below it get OFFSET_OUT_OF_RANGE handling.

With auto.offset.reset=error (kafka-python/aiokafka: "none") the client must
hand the out-of-range condition to the application; with earliest it must
resume at the new log start offset. The deletion point lies inside a batch, as
Kafka allows, so the broker serves that batch and the client skips its head.
"""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError

from tests.scenarios.compat.clients import (
    DRIVERS,
    ClientOperationError,
    ConfluentDriver,
    OffsetOutOfRangeReported,
    OutgoingRecord,
)
from tests.scenarios.compat.sample_records import recent_base_ms
from tests.support.broker_under_test import (
    TANSU_DELETE_RECORDS_UNIMPLEMENTED,
    require_spate,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

BATCHES, BATCH_SIZE = 4, 25
DELETE_BEFORE = 40  # inside the second batch


@pytest.fixture(autouse=True)
def _delete_records_supported(broker_kind: str) -> None:
    require_spate(broker_kind, TANSU_DELETE_RECORDS_UNIMPLEMENTED)


def filled_topic(bootstrap: str, topic: str) -> list[OutgoingRecord]:
    """One partition holding BATCHES batches of BATCH_SIZE records, offsets 0..N-1."""
    producer = ConfluentDriver(bootstrap)
    producer.create_topic(topic, 1)
    base = recent_base_ms()
    records = [OutgoingRecord(f"k{i}".encode(), f"v{i}".encode(), (), base + i) for i in range(BATCHES * BATCH_SIZE)]
    producer.produce(topic, records, partition=0, flush_every=BATCH_SIZE)
    return records


@pytest.mark.parametrize("client", list(DRIVERS))
def test_delete_records_moves_log_start_offset(broker, topic_name, client: str) -> None:
    topic = topic_name()
    filled_topic(broker.bootstrap, topic)
    driver = DRIVERS[client](broker.bootstrap)

    assert driver.delete_records(topic, 0, DELETE_BEFORE) == DELETE_BEFORE
    assert driver.log_start_offset(topic, 0) == DELETE_BEFORE


@pytest.mark.parametrize("client", list(DRIVERS))
def test_fetch_below_log_start_is_reported_when_reset_policy_is_error(broker, topic_name, client: str) -> None:
    topic = topic_name()
    records = filled_topic(broker.bootstrap, topic)
    driver = DRIVERS[client](broker.bootstrap)
    driver.delete_records(topic, 0, DELETE_BEFORE)

    with pytest.raises(OffsetOutOfRangeReported):
        driver.consume(topic, {0: 0}, {0: len(records)}, reset="error")


@pytest.mark.parametrize("client", list(DRIVERS))
def test_fetch_below_log_start_resumes_at_new_start_when_reset_policy_is_earliest(
    broker, topic_name, client: str
) -> None:
    topic = topic_name()
    records = filled_topic(broker.bootstrap, topic)
    driver = DRIVERS[client](broker.bootstrap)
    driver.delete_records(topic, 0, DELETE_BEFORE)

    consumed = driver.consume(topic, {0: 0}, {0: len(records)}, reset="earliest")

    assert [r.offset for r in consumed] == list(range(DELETE_BEFORE, len(records)))
    assert [(r.key, r.value) for r in consumed] == [(r.key, r.value) for r in records[DELETE_BEFORE:]]


@pytest.mark.parametrize("client", list(DRIVERS))
def test_fetch_at_log_start_reads_from_inside_the_first_remaining_batch(broker, topic_name, client: str) -> None:
    topic = topic_name()
    records = filled_topic(broker.bootstrap, topic)
    driver = DRIVERS[client](broker.bootstrap)
    driver.delete_records(topic, 0, DELETE_BEFORE)

    consumed = driver.consume(topic, {0: DELETE_BEFORE}, {0: len(records)}, reset="error")

    assert [r.offset for r in consumed] == list(range(DELETE_BEFORE, len(records)))


def test_delete_records_below_log_start_keeps_it(broker, topic_name) -> None:
    topic = topic_name()
    filled_topic(broker.bootstrap, topic)
    admin = ConfluentDriver(broker.bootstrap)
    admin.delete_records(topic, 0, DELETE_BEFORE)

    assert admin.delete_records(topic, 0, 10) == DELETE_BEFORE
    assert admin.log_start_offset(topic, 0) == DELETE_BEFORE


def test_delete_records_to_end_offset_empties_the_partition(broker, topic_name) -> None:
    topic = topic_name()
    records = filled_topic(broker.bootstrap, topic)
    admin = ConfluentDriver(broker.bootstrap)

    # -1 asks for everything below the high watermark.
    assert admin.delete_records(topic, 0, -1) == len(records)
    assert admin.log_start_offset(topic, 0) == len(records)


def test_delete_records_beyond_high_watermark_is_offset_out_of_range(broker, topic_name) -> None:
    topic = topic_name()
    records = filled_topic(broker.bootstrap, topic)
    admin = ConfluentDriver(broker.bootstrap)

    with pytest.raises(ClientOperationError) as failure:
        admin.delete_records(topic, 0, len(records) + 5)

    assert failure.value.code == KafkaError.OFFSET_OUT_OF_RANGE
    assert admin.log_start_offset(topic, 0) == 0


def test_produce_after_delete_records_continues_the_offsets(broker, topic_name) -> None:
    topic = topic_name()
    records = filled_topic(broker.bootstrap, topic)
    client = ConfluentDriver(broker.bootstrap)
    client.delete_records(topic, 0, -1)

    (placement,) = client.produce(topic, [OutgoingRecord(b"k", b"after", (), recent_base_ms())], partition=0)

    assert placement.offset == len(records)
    (consumed,) = client.consume(topic, {0: len(records)}, {0: len(records) + 1})
    assert consumed.value == b"after"
