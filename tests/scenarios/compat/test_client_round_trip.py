"""Each real client creates a topic, produces keyed records with every codec, and reads them back unchanged.

The producer runs with acks=all and idempotence; the consumer assigns the
partitions itself (no group). The delivery reports say where each record went;
the read-back must match them exactly (see ``sample_records.check_read_back``).
"""

from __future__ import annotations

import zlib

import pytest

from tests.scenarios.compat.clients import CODECS, DRIVERS, Codec
from tests.scenarios.compat.sample_records import (
    check_read_back,
    end_offsets,
    keyed_records,
)
from tests.support.broker_under_test import TANSU_IDEMPOTENCE_BUG, require_spate

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

RECORDS = 10_000
PARTITIONS = 3


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("client", list(DRIVERS))
def test_client_reads_back_every_acknowledged_record_unchanged(
    broker, broker_kind, topic_name, client: str, codec: Codec
) -> None:
    if client == "aiokafka":
        require_spate(broker_kind, TANSU_IDEMPOTENCE_BUG)
    driver = DRIVERS[client](broker.bootstrap)
    topic = topic_name()
    driver.create_topic(topic, PARTITIONS)

    sent = keyed_records(RECORDS, seed=zlib.crc32(f"{client}/{codec}".encode()), tag=f"{client}/{codec}")
    placements = driver.produce(topic, sent, codec=codec)
    consumed = driver.consume(topic, {p: 0 for p in range(PARTITIONS)}, end_offsets(placements))

    check_read_back(sent, placements, consumed)
    assert {p.partition for p in placements} == set(range(PARTITIONS)), "keys should spread over all partitions"
