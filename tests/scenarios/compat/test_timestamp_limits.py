"""A topic's message.timestamp.after.max.ms refuses records from too far in the future with INVALID_TIMESTAMP."""

from __future__ import annotations

import time

import pytest

from tests.scenarios.compat.clients import ClientOperationError, ConfluentDriver, OutgoingRecord
from tests.support.broker_under_test import require_spate

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

INVALID_TIMESTAMP = 32
HOUR_MS = 3_600_000


def test_a_record_stamped_beyond_the_topics_limit_is_refused_and_takes_no_offset(
    broker, broker_kind: str, topic_name
) -> None:
    require_spate(broker_kind, "it does not check record timestamps against message.timestamp.*.max.ms")
    topic = topic_name()
    client = ConfluentDriver(broker.bootstrap)
    client.create_topic(topic, 1, {"message.timestamp.after.max.ms": str(HOUR_MS)})
    now = int(time.time() * 1000)

    with pytest.raises(ClientOperationError) as refused:
        client.produce(topic, [OutgoingRecord(b"k", b"later", (), now + 2 * HOUR_MS)], partition=0)

    assert refused.value.code == INVALID_TIMESTAMP
    (accepted,) = client.produce(topic, [OutgoingRecord(b"k", b"now", (), now)], partition=0)
    assert accepted.offset == 0
