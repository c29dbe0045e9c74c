"""A fetched batch whose header and CRC are sound but whose records are not, against a scripted broker.

The fetcher checks batch headers and CRCs as responses arrive and decodes
records only when they are handed out. Records of the sound batches before
the bad one are still handed out; the bad batch then fails the next poll
with CORRUPT_MESSAGE, every time it is fetched again, and the position
stays before it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import pytest
from crc32c import crc32c

from spate.client import Consumer, ErrorCode, KafkaError, TopicPartition
from spate.protocol import ApiKey
from spate.protocol.messages.fetch import FetchResponse
from spate.protocol.messages.metadata import MetadataResponse
from spate.records import Record, build_batch
from tests.spate.client.fake_broker import SILENT, FakeBroker

TOPIC = "damaged"
TP = TopicPartition(TOPIC, 0)


def damaged(first: int, count: int) -> bytes:
    """A batch of ``count`` records whose last record's length runs past the batch; CRC repaired."""
    records = [Record(first + i, 1_000, None, b"value-%d" % i) for i in range(count)]
    batch = bytearray(build_batch(records, base_offset=first))
    batch[-(len(b"value-0") + 4)] = 0x7E  # the last record's value length varint: far too long
    struct.pack_into(">I", batch, 17, crc32c(bytes(batch[21:])))
    return bytes(batch)


LOG = build_batch([Record(i, 1_000, None, b"ok-%d" % i) for i in range(3)]) + damaged(3, 3)


def answer(port: int, key: ApiKey, body: Any) -> Any:
    if key == ApiKey.METADATA:
        M = MetadataResponse
        return M(
            brokers=[M.MetadataResponseBroker(node_id=0, host="127.0.0.1", port=port)],
            controller_id=0,
            topics=[M.MetadataResponseTopic(error_code=0, name=TOPIC, is_internal=False, partitions=[
                M.MetadataResponsePartition(error_code=0, partition_index=0, leader_id=0, leader_epoch=0,
                                            replica_nodes=[0], isr_nodes=[0])
            ])],
        )
    if key == ApiKey.FETCH:
        F = FetchResponse
        offset = body.topics[0].partitions[0].fetch_offset
        records = LOG if offset == 0 else damaged(3, 3)
        partition = F.PartitionData(
            partition_index=0, error_code=0, high_watermark=6, last_stable_offset=6, log_start_offset=0,
            aborted_transactions=None, records=records,
        )
        return F(throttle_time_ms=0, responses=[F.FetchableTopicResponse(topic=TOPIC, partitions=[partition])])
    return SILENT


@pytest.fixture
def broker() -> Iterator[FakeBroker]:
    fake = FakeBroker()
    fake.handler = lambda key, version, body: answer(fake.port, key, body)
    yield fake
    fake.stop()


@pytest.mark.parametrize("poll", ["poll", "poll_batches"])
def test_records_before_a_corrupt_batch_are_handed_out_and_the_batch_fails_every_later_poll(broker, poll) -> None:
    with Consumer(broker.bootstrap, fetch_max_wait_ms=10) as consumer:
        consumer.assign([TP])
        consumer.seek(TP, 0)
        values: list = []
        for _ in range(20):
            out = getattr(consumer, poll)(timeout_ms=50)
            values += [r.value for r in out] if poll == "poll" else [v for b in out for v in b.values]
            if values:
                break
        assert values == [b"ok-0", b"ok-1", b"ok-2"]
        for _ in range(2):
            with pytest.raises(KafkaError) as failure:
                for _ in range(20):
                    getattr(consumer, poll)(timeout_ms=50)
            assert failure.value.code == ErrorCode.CORRUPT_MESSAGE
            assert "damaged-0 at offset 3" in str(failure.value)
        assert consumer.position(TP) == 3
