"""A record batch larger than ``message.max.bytes`` (or a topic's ``max.message.bytes``) gets MESSAGE_TOO_LARGE.

Each client's own size limit is raised far above the broker's, so the
rejection must come from the broker, and nothing of the rejected batch may
reach the log.
"""

from __future__ import annotations

import pytest

from tests.scenarios.compat.clients import (
    DRIVERS,
    ClientOperationError,
    ConfluentDriver,
    OutgoingRecord,
)
from tests.scenarios.compat.sample_records import recent_base_ms
from tests.support.broker_process import BrokerProcess
from tests.support.broker_under_test import (
    TANSU_IDEMPOTENCE_BUG,
    BrokerFactory,
    require_spate,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

BROKER_LIMIT = 100_000
CLIENT_LIMIT = 10_000_000
MESSAGE_TOO_LARGE = 10


@pytest.fixture
def limited_broker(broker_factory: BrokerFactory) -> BrokerProcess:
    return broker_factory({"message.max.bytes": str(BROKER_LIMIT)})


def record(size: int) -> OutgoingRecord:
    return OutgoingRecord(b"big", bytes(range(256)) * (size // 256) + b"x" * (size % 256), (), recent_base_ms())


@pytest.mark.parametrize("client", list(DRIVERS))
def test_batch_above_message_max_bytes_is_message_too_large(
    limited_broker: BrokerProcess, broker_kind: str, topic_name, client: str
) -> None:
    if client == "aiokafka":
        require_spate(broker_kind, TANSU_IDEMPOTENCE_BUG)
    topic = topic_name()
    ConfluentDriver(limited_broker.bootstrap).create_topic(topic, 1)
    driver = DRIVERS[client](limited_broker.bootstrap, max_request_bytes=CLIENT_LIMIT)

    with pytest.raises(ClientOperationError) as rejected:
        driver.produce(topic, [record(2 * BROKER_LIMIT)], partition=0)

    assert rejected.value.code == MESSAGE_TOO_LARGE
    (accepted,) = driver.produce(topic, [record(BROKER_LIMIT // 2)], partition=0)
    assert accepted.offset == 0, "the rejected batch must not have taken an offset"


def test_topic_max_message_bytes_overrides_the_broker_limit(broker, broker_kind: str, topic_name) -> None:
    require_spate(broker_kind, "it enforces no size limit, neither message.max.bytes nor a topic's max.message.bytes")
    topic = topic_name()
    client = ConfluentDriver(broker.bootstrap, max_request_bytes=CLIENT_LIMIT)
    client.create_topic(topic, 1, {"max.message.bytes": "20000"})

    with pytest.raises(ClientOperationError) as rejected:
        client.produce(topic, [record(50_000)], partition=0)

    assert rejected.value.code == MESSAGE_TOO_LARGE
    (accepted,) = client.produce(topic, [record(10_000)], partition=0)
    assert accepted.offset == 0
